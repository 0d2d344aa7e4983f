"""TensorFlow and Keras consumers of the batch size: TF1 queue batchers, ``tf.data`` chains and Keras'
ImageDataGenerator flows, reached through a helper the script calls; and a class used as a namespace of settings
(``class Hyperparams: batch_size = 32``) that the script and its helper both import."""

from __future__ import annotations

from pathlib import Path

import pytest

from schedmate.agents.advisor.extract.metadata import extract_metadata
from tests.repo_files import write

_HYPERPARAMS = """
class Hyperparams:
    '''Hyper parameters'''
    lr = 0.001
    batch_size = 24
    num_epochs = 200
"""

_DATA_LOAD_QUEUE = """
import tensorflow as tf
from hyperparams import Hyperparams as hp


def get_batch():
    texts = tf.convert_to_tensor([[1, 2], [3, 4]])
    text, = tf.train.slice_input_producer([texts], shuffle=True)
    x = tf.train.shuffle_batch([text], hp.batch_size, capacity=hp.batch_size * 4, min_after_dequeue=8)
    return x
"""

_DATA_LOAD_BUCKET = """
import tensorflow as tf
from hyperparams import Hyperparams as hp


def get_batch():
    texts = tf.convert_to_tensor([[1, 2], [3, 4]])
    text, = tf.train.slice_input_producer([texts], shuffle=True)
    _, (x,) = tf.contrib.training.bucket_by_sequence_length(
        input_length=tf.shape(text)[0], tensors=[text], batch_size=hp.batch_size,
        bucket_boundaries=[5, 10], dynamic_pad=True)
    return x
"""

_DATA_LOAD_TFDATA = """
import tensorflow as tf


def input_fn(values, batch_size):
    dataset = tf.data.Dataset.from_tensor_slices(values).shuffle(100).batch(batch_size, drop_remainder=True)
    return dataset
"""

_TRAIN_TF = """
import tensorflow as tf
from hyperparams import Hyperparams as hp
from data_load import get_batch


class Graph:
    def __init__(self):
        self.x = get_batch()
        logits = tf.layers.dense(tf.cast(self.x, tf.float32), 4)
        self.loss = tf.reduce_mean(logits)
        self.train_op = tf.train.AdamOptimizer(hp.lr).minimize(self.loss)


if __name__ == '__main__':
    g = Graph()
    with tf.Session() as sess:
        for epoch in range(hp.num_epochs):
            sess.run(g.train_op)
"""

_TRAIN_TFDATA = """
import argparse
import tensorflow as tf
from data_load import input_fn

parser = argparse.ArgumentParser()
parser.add_argument('--chunk', type=int, default=48)
args = parser.parse_args()
model = tf.keras.Sequential([tf.keras.layers.Dense(4)])
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss='mse')
model.fit(input_fn([[1.0, 2.0]] * 10, args.chunk), epochs=3)
"""


@pytest.mark.parametrize("data_load", [_DATA_LOAD_QUEUE, _DATA_LOAD_BUCKET])
def test_tf1_queue_batchers_through_a_helper(tmp_path: Path, data_load: str) -> None:
    """``tf.train.shuffle_batch(tensors, hp.batch_size)`` and ``bucket_by_sequence_length(batch_size=…)`` in the
    helper the graph calls give the batch; ``hp`` is the same imported settings class in both files (this fails on
    the commit before, which knew neither batcher nor read a settings class's attributes)."""
    write(tmp_path, {"train.py": _TRAIN_TF, "data_load.py": data_load, "hyperparams.py": _HYPERPARAMS})
    md = extract_metadata(tmp_path, "python train.py")
    assert (md.batch_size_per_device, md.global_batch_size) == (24, 24)
    assert md.learning_rate == 0.001  # `tf.train.AdamOptimizer(hp.lr)`: the class attribute


def test_tf_data_batch_in_a_helper(tmp_path: Path) -> None:
    """``tf.data.Dataset.from_tensor_slices(...).shuffle(n).batch(batch_size)`` in a helper called with the script's
    ``--chunk`` gives the batch, whatever the setting is called (the command's value over the default)."""
    write(tmp_path, {"train.py": _TRAIN_TFDATA, "data_load.py": _DATA_LOAD_TFDATA})
    assert extract_metadata(tmp_path, "python train.py").batch_size_per_device == 48
    assert extract_metadata(tmp_path, "python train.py --chunk 16").batch_size_per_device == 16


def test_keras_flow_from_directory_batch(tmp_path: Path) -> None:
    """Keras' ``ImageDataGenerator().flow_from_directory(batch_size=batch_size)`` in the generator helper whose first
    argument the script passes (``trainGenerator(2, 'data/train', …)``) is the batch ``fit_generator`` trains on."""
    data = """
from keras.preprocessing.image import ImageDataGenerator


def trainGenerator(batch_size, train_path, target_size=(256, 256)):
    gen = ImageDataGenerator(rotation_range=0.2)
    images = gen.flow_from_directory(train_path, class_mode=None, target_size=target_size, batch_size=batch_size)
    for img in images:
        yield img, img
"""
    train = """
from keras.models import Sequential
from keras.layers import Conv2D
from data import trainGenerator

model = Sequential([Conv2D(1, 3, padding='same', input_shape=(256, 256, 1))])
model.compile(optimizer='adam', loss='mse')
model.fit_generator(trainGenerator(3, 'data/train'), steps_per_epoch=100, epochs=2)
"""
    write(tmp_path, {"train.py": train, "data.py": data})
    assert extract_metadata(tmp_path, "python train.py").batch_size_per_device == 3


def test_a_plain_batch_method_is_not_tf_data(tmp_path: Path) -> None:
    """``sampler.batch(16, True)`` on an object that is not a ``tf.data`` chain says nothing of the batch (a guard:
    only ``padded_batch`` and chains over ``tf.data`` count)."""
    train = """
import tensorflow as tf
from buffer import Replay

memory = Replay(1000)
for step in range(10):
    x = memory.batch(16, True)
"""
    write(tmp_path, {"train.py": train, "buffer.py": "class Replay:\n    def __init__(self, n):\n        self.n = n\n"})
    assert extract_metadata(tmp_path, "python train.py").batch_size_per_device is None
