"""Segment the Oxford-IIIT Pet images with a U-Net in Keras."""
import argparse

import keras
import tensorflow_datasets as tfds
from keras import layers


def unet(img_size, num_classes):
    inputs = keras.Input(shape=(img_size, img_size, 3))
    x = inputs
    skips = []
    for filters in (64, 128, 256):
        x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
        skips.append(x)
        x = layers.MaxPooling2D(2)(x)
    x = layers.Conv2D(512, 3, padding="same", activation="relu")(x)
    for filters, skip in zip((256, 128, 64), reversed(skips)):
        x = layers.Conv2DTranspose(filters, 2, strides=2, padding="same")(x)
        x = layers.concatenate([x, skip])
        x = layers.Conv2D(filters, 3, padding="same", activation="relu")(x)
    outputs = layers.Conv2D(num_classes, 1, activation="softmax")(x)
    return keras.Model(inputs, outputs, name="unet")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=50)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--img_size", type=int, default=256)
    parser.add_argument("--lr", type=float, default=1e-3)
    args = parser.parse_args()

    train, val = tfds.load("oxford_iiit_pet", split=["train", "test"], as_supervised=True)
    train = train.batch(args.batch_size)
    model = unet(args.img_size, num_classes=3)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=args.lr), loss="sparse_categorical_crossentropy",
                  metrics=["accuracy"])
    model.fit(train, epochs=args.epochs, validation_data=val.batch(args.batch_size))


if __name__ == "__main__":
    main()
