"""Parameter counts of ``torch.nn`` layers from their constructor arguments (Linear, Conv*,
ConvTranspose*, norms, Embedding, LSTM/GRU/RNN (and their cells), ``nn.Parameter(torch.zeros(…))``, weight norm)."""

from __future__ import annotations

import re
from typing import Any, Final

from schedmate.agents.advisor.extract.values import UNKNOWN, AbortError, Layer, ModuleDict, Obj, Tensor, prod

__all__ = ["PARALLEL_WRAPPERS", "layer_kind", "torch_call"]

_ZERO_PARAM: Final = frozenset(
    {"ReLU", "GELU", "SiLU", "Tanh", "Sigmoid", "LeakyReLU", "Dropout", "Dropout2d", "Identity", "MaxPool1d",
     "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool2d", "AdaptiveAvgPool1d", "Upsample", "Flatten",
     "Softmax", "LogSoftmax", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "Mish", "ELU", "Hardtanh",
     "PixelShuffle", "PixelUnshuffle", "Softplus", "Hardswish", "Hardsigmoid", "SELU", "CELU", "GLU", "Softmax2d",
     "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad2d", "ConstantPad2d", "Dropout1d",
     "Dropout3d", "AlphaDropout", "MaxPool3d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
     "AdaptiveAvgPool3d", "Unflatten", "LocalResponseNorm", "ChannelShuffle", "Softsign", "Tanhshrink"}
)  # fmt: skip


_TUPLES: Final = {"to_2tuple": 2, "_pair": 2, "to_3tuple": 3, "_triple": 3}


def _repeated(t: Tensor, pattern: str, sizes: dict[str, Any]) -> Any:
    """The tensor einops' ``repeat(t, pattern, **sizes)`` builds: the axes the right side adds, each of the size the
    keywords give it, times ``t``'s elements; unknown when an added axis has no size given."""
    left, arrow, right = pattern.partition("->")
    if not arrow:
        return UNKNOWN
    have = set(re.findall(r"\w+", left))
    numel = t.numel
    for axis in re.findall(r"\w+", right):
        if axis in have or axis.isdigit():
            numel *= int(axis) if axis.isdigit() else 1
            continue
        size = sizes.get(axis)
        if not isinstance(size, int) or isinstance(size, bool) or size <= 0:
            return UNKNOWN
        numel *= size
    return Tensor(numel)


def _vector(name: str, args: list[Any], kw: dict[str, Any]) -> Any:
    """The 1-D tensor ``linspace``/``logspace(start, end, steps)`` or ``arange([start,] end[, step])`` builds."""
    if name != "arange":
        steps = args[2] if len(args) > 2 else kw.get("steps", UNKNOWN)
        return Tensor(steps, vector=True) if isinstance(steps, int) and 0 <= steps <= 1 << 20 else UNKNOWN
    bounds = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
    if len(bounds) != len(args) or not 1 <= len(bounds) <= 3:
        return UNKNOWN
    if len(bounds) == 3 and bounds[2] == 0:
        return UNKNOWN
    n = len(range(*bounds)) if len(bounds) > 1 or bounds[0] >= 0 else 0
    return Tensor(n, vector=True) if n <= 1 << 20 else UNKNOWN


PARALLEL_WRAPPERS: Final = frozenset(
    {"DataParallel", "DistributedDataParallel", "DDP", "FullyShardedDataParallel", "FSDP"}
)
_ELEMENTWISE: Final = frozenset({"log", "exp", "sqrt", "abs", "sigmoid", "tanh", "log1p", "expm1", "neg", "clone"})


def _numel(value: Any, depth: int = 0) -> int | None:
    """How many numbers a literal holds (a number: one; nested lists: all of theirs), or None."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return 1
    if isinstance(value, list | tuple) and depth < 4 and len(value) <= 100_000:
        counts = [_numel(v, depth + 1) for v in value]
        return sum(c for c in counts if c is not None) if all(c is not None for c in counts) else None
    return None


def torch_call(name: str, args: list[Any], kw: dict[str, Any]) -> tuple[Any, int]:
    """The value of ``torch``/``nn`` call ``name`` and the parameters it creates."""

    def arg(i: int, key: str, default: Any = UNKNOWN) -> Any:
        v = args[i] if i < len(args) else kw.get(key, default)
        if v is UNKNOWN or isinstance(v, Obj):  # (an object, such as the settings standing in for a name computed
            raise AbortError(f"{name}: unknown {key}")  # at run time, is no size)
        return v

    if name in _TUPLES and len(args) == 1:  # timm's `to_2tuple(img_size)`, torch's `_pair(kernel_size)`
        x = args[0]
        if isinstance(x, int | float) and not isinstance(x, bool):
            return (x,) * _TUPLES[name], 0
        return (tuple(x) if isinstance(x, list | tuple) else UNKNOWN), 0
    if name in ("weight_norm", "spectral_norm", "remove_weight_norm"):
        layer = args[0] if args else UNKNOWN
        if name == "weight_norm" and isinstance(layer, Layer):
            return layer, layer.out  # weight_g: one gain per output (dim=0)
        return layer, 0
    if name in ("linspace", "logspace", "arange"):  # 1-D: `for freq in torch.linspace(0, m, steps=n)` runs n times
        return _vector(name, args, kw), 0
    if name in PARALLEL_WRAPPERS and args and isinstance(args[0], Obj | Layer):
        return args[0], 0  # `DataParallel(model)`: the same module, run on more devices (no parameters of its own)
    if name in ("tensor", "as_tensor") and args:  # `torch.tensor(dim_head ** -0.5)`: a scalar (or a list's values)
        n = _numel(args[0])
        return (Tensor(n) if n else UNKNOWN), 0
    if name == "repeat" and len(args) == 2 and isinstance(args[0], Tensor) and isinstance(args[1], str):
        return _repeated(args[0], args[1], kw), 0  # einops: `repeat(A, "n -> d n", d=k)`
    if name in _ELEMENTWISE and len(args) == 1 and isinstance(args[0], Tensor):
        return args[0], 0  # `torch.log(t)`: the same shape (an initial value's size, as in `nn.Parameter(...)`)
    if name in ("zeros", "ones", "randn", "rand", "empty", "Tensor", "FloatTensor"):
        shape = args[0] if len(args) == 1 and isinstance(args[0], list | tuple) else args
        return (Tensor(prod(shape)) if all(isinstance(s, int) for s in shape) else UNKNOWN), 0
    if name == "Parameter":
        t = args[0] if args else UNKNOWN
        if isinstance(t, Tensor):
            return Layer(t.numel), t.numel
        raise AbortError("parameter of unknown size")
    if name in ("ModuleList", "Sequential", "ParameterList"):  # containers: members were counted when built
        return (list(args[0]) if name != "Sequential" and args and isinstance(args[0], list | tuple) else list(args)), 0
    if name == "ModuleDict":
        return ModuleDict(args[0] if args and isinstance(args[0], dict) else {}), 0
    n, out, width, weight, inp = 0, 0, 0, 0, 0
    if name in ("Linear", "MergedLinear"):  # (loralib's LoRA layers: the frozen weight; the low-rank A/B are small)
        out, width, inp = arg(1, "out_features"), arg(1, "out_features"), arg(0, "in_features")
        weight = arg(0, "in_features") * arg(1, "out_features")
        n = weight + (arg(1, "out_features") if arg(99, "bias", True) else 0)
    elif name in ("Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"):
        dims = int(name[-2])
        k = arg(2, "kernel_size")
        ksize = prod(k) if isinstance(k, list | tuple) else k**dims
        groups = kw.get("groups", args[6] if len(args) > 6 and "Transpose" not in name else 1)
        cin, cout = arg(0, "in_channels"), arg(1, "out_channels")
        out = cin if "Transpose" in name else cout  # weight_norm's dim 0 of a transposed conv is its input
        width, inp = cout, cin
        weight = cin * cout * ksize // groups
        n = weight + (cout if kw.get("bias", True) else 0)
        stride, pad = (
            kw.get("stride", args[3] if len(args) > 3 else 1),
            kw.get("padding", args[4] if len(args) > 4 else 0),
        )
        if "Transpose" not in name and _patchify(k, stride, pad):  # cuts the input into patches it embeds (a ViT's,
            known = [v if isinstance(v, int) else 0 for v in (width, weight, inp)]  # GFNet's stem): an embedding
            return Layer(int(n), int(out), known[0], known[1], "patch", known[2], name), int(n)
    elif name.startswith(("BatchNorm", "InstanceNorm", "SyncBatchNorm")):
        affine = kw.get("affine", not name.startswith("InstanceNorm"))
        n = 2 * arg(0, "num_features") if affine else 0
        width = arg(0, "num_features")
    elif name == "LayerNorm":
        shape = arg(0, "normalized_shape")
        n = 2 * prod(shape) if kw.get("elementwise_affine", True) else 0
    elif name == "GroupNorm":
        n = 2 * arg(1, "num_channels")
    elif name == "PReLU":
        n = args[0] if args and isinstance(args[0], int) else kw.get("num_parameters", 1)
    elif name == "Embedding":
        n = weight = arg(0, "num_embeddings") * arg(1, "embedding_dim")
        width = arg(1, "embedding_dim")
    elif name in ("LSTM", "GRU", "RNN"):
        gates = {"LSTM": 4, "GRU": 3, "RNN": 1}[name]
        inp, hid = arg(0, "input_size"), arg(1, "hidden_size")  # (input, hidden, num_layers, bias, batch_first,
        layers, bidir = arg(2, "num_layers", 1), 2 if arg(6, "bidirectional", False) else 1  # dropout, bidirectional)
        biases = 2 * hid if arg(3, "bias", True) else 0
        per = gates * (hid * (inp + hid) + biases)
        n = (per + (layers - 1) * gates * (hid * (hid * bidir + hid) + biases)) * bidir
    elif name in ("LSTMCell", "GRUCell", "RNNCell"):  # one layer, one direction: weights ih and hh, two biases
        gates = {"LSTMCell": 4, "GRUCell": 3, "RNNCell": 1}[name]
        inp, hid = arg(0, "input_size"), arg(1, "hidden_size")
        n = gates * (hid * (inp + hid) + (2 * hid if kw.get("bias", True) else 0))
    elif name == "MultiheadAttention":  # in_proj (3E x E) and out_proj (E x E), with biases by default
        e = arg(0, "embed_dim")
        n = 4 * e * e + (4 * e if kw.get("bias", True) else 0)
    elif name in ("TransformerEncoderLayer", "TransformerDecoderLayer"):
        d, ff = arg(0, "d_model"), arg(2, "dim_feedforward", 2048)
        attn = 4 * d * d + 4 * d
        n = attn * (2 if "Decoder" in name else 1) + 2 * d * ff + ff + d + 2 * d * (3 if "Decoder" in name else 2)
    # timm's building blocks (timm.layers / timm.models.vision_transformer), as ViT-style models import them
    elif name == "PatchEmbed":
        p, cin, e = arg(1, "patch_size", 16), arg(2, "in_chans", kw.get("in_channels", 3)), arg(3, "embed_dim", 768)
        n = cin * (prod(p) if isinstance(p, list | tuple) else p * p) * e + (e if kw.get("bias", True) else 0)
        img = args[0] if args else kw.get("img_size", 224)
        if isinstance(img, int) and isinstance(p, int) and p > 0:  # `self.x_embedder.num_patches` is read later
            return Obj(attrs={"num_patches": (img // p) ** 2}, cls="PatchEmbed"), int(n)
    elif name == "Attention":
        d = arg(0, "dim")
        n = 3 * d * d + (3 * d if kw.get("qkv_bias", False) else 0) + d * d + d
    elif name == "Block":  # timm's ViT block: two LayerNorms, Attention (qkv, proj) and an Mlp of mlp_ratio
        d = arg(0, "dim")
        hidden = int(d * arg(2, "mlp_ratio", 4.0))
        qkv_bias = args[3] if len(args) > 3 else kw.get("qkv_bias", False)
        n = 4 * d + 3 * d * d + (3 * d if qkv_bias else 0) + d * d + d + 2 * d * hidden + hidden + d
    elif name == "Mlp":
        i = arg(0, "in_features")
        h, o = kw.get("hidden_features") or i, kw.get("out_features") or i
        n = i * h + h + h * o + o if kw.get("bias", True) else i * h + h * o
    # torchvision's detection and segmentation heads, as its fine-tuning tutorials put them on a built model
    elif name == "FastRCNNPredictor":  # cls_score Linear(in, n) and bbox_pred Linear(in, 4n)
        n = 5 * arg(1, "num_classes") * (arg(0, "in_channels") + 1)
    elif name == "MaskRCNNPredictor":  # ConvTranspose2d(in, dim, 2) and a 1x1 Conv2d(dim, n)
        cin, dim, classes = arg(0, "in_channels"), arg(1, "dim_reduced"), arg(2, "num_classes")
        n = cin * dim * 4 + dim + dim * classes + classes
    elif name == "KeypointRCNNPredictor":  # ConvTranspose2d(in, keypoints, 4)
        n = arg(0, "in_channels") * arg(1, "num_keypoints") * 16 + arg(1, "num_keypoints")
    elif name == "DeepLabHead":  # ASPP (rates 12, 24, 36; 256 channels), a 3x3 conv, a BatchNorm, a 1x1 classifier
        cin, classes, a = arg(0, "in_channels"), arg(1, "num_classes"), 256
        n = 2 * (cin * a + 2 * a) + 3 * (cin * a * 9 + 2 * a) + 5 * a * a + 2 * a + a * a * 9 + 2 * a + a * classes
        n += classes
    elif name == "FCNHead":  # a 3x3 conv to in/4 channels, a BatchNorm, a 1x1 conv to the classes
        cin, classes = arg(0, "in_channels"), arg(1, "channels")
        n = cin * (cin // 4) * 9 + 2 * (cin // 4) + (cin // 4) * classes + classes
    elif name in _ZERO_PARAM:
        return Layer(0, cls=name), 0
    else:
        return UNKNOWN, 0
    known = [v if isinstance(v, int) else 0 for v in (width, weight, inp)]
    return Layer(int(n), int(out), known[0], known[1], layer_kind(name), known[2], name), int(n)


def _patchify(kernel: Any, stride: Any, padding: Any) -> bool:
    """Whether a convolution's windows tile its input without overlap or padding (kernel = stride > 1)."""

    def pair(v: Any) -> tuple[Any, ...]:
        return tuple(v) if isinstance(v, list | tuple) else (v, v)

    k, st = pair(kernel), pair(stride)
    return (
        k == st and all(isinstance(x, int) and not isinstance(x, bool) and x > 1 for x in k)
        and padding in (0, (0, 0), [0, 0], "valid")
    )  # fmt: skip


def layer_kind(name: str) -> str:
    """The family a layer belongs to, for telling a model's architecture by where its parameters are."""
    if name in ("Linear", "MergedLinear", "Mlp"):
        return "linear"
    if name.startswith(("Conv", "ConvTranspose")) or name == "PatchEmbed":
        return "conv" if name != "PatchEmbed" else "embedding"
    if name.startswith(("LSTM", "GRU", "RNN")):
        return "rnn"
    if name in ("MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer", "Attention"):
        return "attention"
    if name == "Embedding":
        return "embedding"
    return "norm" if "Norm" in name else ""
