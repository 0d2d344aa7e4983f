"""What a job trains and on what: model name and type, task, dataset — read from code, never run.

Evidence, strongest first: a pretrained checkpoint id (``model_name_or_path``, ``init_from``,
``from_pretrained("…")``); the model class the entry script builds (``model = UNet(…)``, a Hydra
``_target_``) and the layers its definition uses, followed through local imports; the dataset
settings, data-module and dataset classes; the README's title. Vocabularies are those of
``WorkloadMetadata`` (see the eval README): families of well-known architectures and datasets,
nothing keyed to one repository.
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from schedmate.agents.advisor.extract.known import known_model
from schedmate.agents.advisor.extract.syntax import last_names, parse, walk
from schedmate.agents.advisor.extract.workspace import Workspace
from schedmate.agents.exceptions import WorkspaceError

__all__ = [
    "ModelClass",
    "canonical_dataset",
    "dataset_task",
    "find_class",
    "inline_model",
    "layer_census",
    "model_type_of",
    "readme_datasets",
    "readme_lead",
    "readme_title",
    "specific_family",
    "task_of",
]

# Architecture families by name, most specific first; generic CNN names come after structure.
_SPECIFIC_FAMILIES: Final = (
    (r"vits\b|synthesizertrn|fastspeech|glow-?tts", "vits_tts"),
    (r"tacotron", "rnn"),  # Tacotron (2): a recurrent sequence-to-sequence model with attention
    (r"[a-z0-9]det\b", "cnn_detector"),  # EfficientDet, DiffusionDet: a detector, whatever its first word says
    (r"unet2dcondition|diffusion|ddpm|ldm\b|stable-?diffusion", "diffusion_unet"),
    (r"u[-_]?(?:2|\^2)?[-_]?net", "unet"),  # U-Net, U_Net, AttU_Net, UNet++, U²-Net (U2NET, U-2-Net)
    (r"yolo|(?:\b|faster|fast|mask|cascade|_)r-?cnn|retinanet|\bdetr\b|\bssd\b|fcos|centernet|detector",
     "cnn_detector"),  # (not the "r" of EncoderCNN)
    (r"\bvit\b|vit[-_]|deit|swin|beit|visiontransformer|segformer|\bmit[-_]b\d|poolformer|metaformer|"
     r"\b(?:mm)?dit\b|\b(?:mm)?dit[-_]|\bsit[-_]", "vision_transformer"),  # (DiT, MMDiT, SiT: diffusion transformers)
    (r"roberta|deberta|\bbert|electra|albert|xlm-?r|formaskedlm", "encoder_only_transformer"),
    (r"gpt|llama|qwen|mistral|mixtral|gemma|\bphi|\bopt-|bloom|falcon|pythia|neox|causallm|\bolmo|deepseek|"
     r"starcoder|codegen|baichuan|chatglm|internlm|yi-|causal_lm|\bmpt[-_]", "decoder_only_transformer"),
)  # fmt: skip
_GENERIC_FAMILIES: Final = (
    (r"resnet|resnext|vgg|efficientnet|mobilenet|densenet|convnext|alexnet|inception|regnet|\bcnn", "cnn"),
    (r"lstm|gru\b|\brnn", "rnn"),
    (r"mlp|perceptron|dense", "mlp"),
)
_TASK_BY_TYPE: Final = {
    "vits_tts": "text_to_speech",
    "diffusion_unet": "image_generation_diffusion",
    "unet": "semantic_segmentation",
    "cnn_detector": "object_detection",
}
_HF_HEAD_TASKS: Final = (
    ("ForQuestionAnswering", "question_answering_finetuning"),
    ("ForMaskedLM", "masked_language_modeling"),
    ("ForSequenceClassification", "text_classification"),  # a classification head on a text encoder (GLUE, IMDb)
    ("ForTokenClassification", "token_classification"),  # a label per token (NER, POS)
    ("ForImageClassification", "image_classification"),
    ("ForSemanticSegmentation", "semantic_segmentation"),
    ("ForObjectDetection", "object_detection"),
)
# Well-known datasets (pattern over lower-cased text, canonical name), in order: data, with sources, beside this file.
_DATASETS_FILE: Final = Path(__file__).with_name("known_datasets.json")


@functools.cache
def _datasets() -> tuple[tuple[re.Pattern[str], str], ...]:
    rows = json.loads(_DATASETS_FILE.read_text(encoding="utf-8"))["datasets"]
    return tuple((re.compile(r["pattern"]), r["name"]) for r in rows)


@functools.cache
def _dataset_tasks() -> dict[str, str]:
    rows = json.loads(_DATASETS_FILE.read_text(encoding="utf-8"))["datasets"]
    return {r["name"]: r["task"] for r in rows if r.get("task")}


def dataset_task(name: str | None) -> str | None:
    """The task a well-known dataset is made for (per-pixel labels, video clips, a text corpus), by its canonical
    name; None for a dataset used for several tasks (COCO, Pascal VOC, KITTI) or one not known."""
    return _dataset_tasks().get(name) if name else None


_LAYER_KINDS: Final = (
    # (a class of the job's named for self-attention — minGPT's `CausalSelfAttention` — is a transformer's layer)
    (
        r"(?:Multihead)?Attention|\w*SelfAttention|\w*Multi_?Head(?:ed)?\w*|TransformerEncoder|TransformerDecoder|"
        r"scaled_dot_product|\w+ForCausalLM",  # (Transformer-XL's `RelPartialLearnableMultiHeadAttn`: multi-head is a
        # transformer's; a vision-language model's `LlamaForCausalLM(config.llm_config)`: a language model is one)
        "transformer",
    ),
    # 2-D normalisation and pooling only follow feature maps: convolutions, even when a helper builds them
    (
        r"Conv[123]d|ConvTranspose[123]d|(?:Batch|Instance)Norm[23]d|(?:Max|Avg|AdaptiveAvg|AdaptiveMax)Pool[23]d",
        "conv",
    ),
    # (a decoder stepping an `nn.LSTMCell` is recurrent too; TensorFlow's `rnn.MultiRNNCell`, `BasicLSTMCell`)
    (r"(?:LSTM|GRU|RNN)(?:Cell)?|\w*(?:LSTM|GRU|RNN)\w*Cell|CuDNN(?:LSTM|GRU)", "rnn"),
    (r"Linear", "linear"),
    (r"Embedding", "embedding"),  # a lookup of tokens: with only linear layers besides, no MLP over features
)


_SELF_ATTENTION: Final = re.compile(
    r"Multihead\w*|\w*Multi_?Head(?:ed)?\w*|\w*SelfAttention\w*|Transformer\w*|\w*TransformerBlock"
)


# Layers written as functions over tensors the job holds itself (a functional wide ResNet's `F.conv2d(x, params[…])`)
_FUNCTIONAL_LAYERS: Final = ((r"conv(?:_transpose)?[123]d", "conv"), (r"linear", "linear"), (r"lstm|gru|rnn", "rnn"))
# TensorFlow's layers as functions (`tf.nn.conv2d(x, W, …)`, `tf.layers.dense(x, 128)`, `tf.nn.dynamic_rnn(cell, x)`)
_TF_FUNCTIONAL_LAYERS: Final = (
    (r"(?:atrous_|depthwise_|separable_)?conv[123]d(?:_transpose)?", "conv"),
    (r"dense", "linear"),
    (r"(?:bidirectional_)?(?:dynamic|static)_rnn", "rnn"),
)


def _dotted_root(node: ast.expr) -> str:
    """The first name of a dotted expression (``tf`` of ``tf.nn.conv2d``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


# Keras layer classes the PyTorch patterns do not spell (`Conv2D`, `Dense`)
_KERAS_LAYERS: Final = ((r"Conv[123]D|Conv[123]DTranspose|SeparableConv[12]D", "conv"), (r"Dense", "linear"))


@functools.lru_cache(maxsize=4096)
def _layer_kinds(callee: str, keras: bool = False) -> frozenset[str]:
    """The layer kinds a constructor's name says (``Conv2d`` → conv, ``LSTMCell`` → rnn); with ``keras``, also
    Keras' spellings (``Conv2D``, ``Dense``)."""
    table = (*_LAYER_KINDS, *_KERAS_LAYERS) if keras else _LAYER_KINDS
    return frozenset(kind for pattern, kind in table if re.fullmatch(rf"(?:{pattern})", callee))


@dataclass
class ModelClass:
    """A model class the job builds, where it is defined, and what its definition uses."""

    name: str
    file: str | None = None
    line: int | None = None
    layers: set[str] = field(default_factory=set)  # transformer / conv / rnn / linear / embedding / attention
    layer_calls: list[str] = field(default_factory=list)
    backbones: list[tuple[str, str | None]] = field(default_factory=list)  # well-known models it builds, their type


def _attends(fn: ast.AST) -> bool:
    """Whether a method computes attention: a softmax of a product of queries and transposed keys in the same
    function, as a self-attention layer written by hand does (``q @ k.transpose(-2, -1)``, ``bmm(q, k.permute(0, 2,
    1))``, ``tf.matmul(q, k, transpose_b=True)``, an ``einsum``). A softmax over ``matmul(h, W)`` with no transpose
    is an output layer's (a char-RNN's logits), not attention."""
    if not isinstance(fn, ast.FunctionDef):
        return False
    softmax = product = transposed = False
    for node in walk(fn):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            softmax = softmax or name.endswith("softmax")
            product = product or name in ("einsum", "matmul", "bmm", "baddbmm")
            transposed = (
                transposed
                or name in ("einsum", "transpose", "permute", "swapaxes", "t")
                or any(k.arg in ("transpose_b", "adjoint_b") for k in node.keywords)
            )
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            product = True
        elif isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
            transposed = True
    return softmax and product and transposed


def find_class(ws: Workspace, name: str, code: str, file: str, depth: int = 0) -> ModelClass | None:
    """Follow ``code``'s imports (local files only, a few levels) to the definition of class ``name``."""
    try:
        tree = parse(code)
    except SyntaxError:
        return None
    for kind in (ast.ClassDef, ast.FunctionDef):  # (a function of that name builds it: PaLM's `def PaLM(*, dim, …)`)
        for node in walk(tree):
            if isinstance(node, kind) and node.name == name:
                mc = ModelClass(name, file, node.lineno)
                _scan_layers(ws, tree, node, file, mc, depth)
                return mc
    if depth >= 4:
        return None
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name or a.name == "*" for a in node.names):
            original = next((a.name for a in node.names if (a.asname or a.name) == name), name)
            target = ws.module_file(node.module or "", node.level, file)
            if target is None:
                continue
            try:
                text = ws.read_text(target)
            except WorkspaceError:
                continue
            found = find_class(ws, original, text, target, depth + 1)
            if found is not None:
                return found
    return None


def _scan_layers(
    ws: Workspace, tree: ast.Module, cls: ast.ClassDef | ast.FunctionDef, file: str, mc: ModelClass, depth: int
) -> None:
    """The layer kinds a class (or a function that builds a model) uses, through the local classes it builds
    (bounded)."""
    seen = {mc.name}
    stack: list[ast.ClassDef | ast.FunctionDef] = [cls]
    while stack and len(seen) < 40:
        node = stack.pop()
        if isinstance(node, ast.ClassDef) and any(map(_attends, walk(node))):
            mc.layers.add("attention")  # its forward computes attention itself (PaLM's einsum and softmax)
        for base in last_names(node.bases) if isinstance(node, ast.ClassDef) else ():
            if base not in seen:  # `class NAFNetLocal(Local_Base, NAFNet)`: the layers its local bases build
                seen.add(base)
                local = next((c for c in walk(tree) if isinstance(c, ast.ClassDef) and c.name == base), None)
                if local is not None:
                    stack.append(local)
        for call in (n for n in walk(node) if isinstance(n, ast.Call)):
            fn = call.func
            callee = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if callee and not callee[0].isupper() and (hit := _backbone(callee, call)) is not None:
                mc.backbones.append(hit)  # `self.backbone = torchvision.models.resnet50()`
                continue
            if not callee or not callee[0].isupper():
                continue
            mc.layer_calls.append(callee)
            mc.layers |= _layer_kinds(callee)
            if callee in seen:
                continue
            seen.add(callee)
            local = next((c for c in walk(tree) if isinstance(c, ast.ClassDef) and c.name == callee), None)
            if local is not None:
                stack.append(local)
            elif isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) and depth < 3:
                # modules.WN(...) / attentions.Encoder(...): a class in a sibling local module
                target = ws.module_file(fn.value.id, 0, file)
                if target is not None:
                    try:
                        text = ws.read_text(target)
                        sub = parse(text)
                    except (WorkspaceError, SyntaxError):
                        continue
                    other = next((c for c in walk(sub) if isinstance(c, ast.ClassDef) and c.name == callee), None)
                    if other is not None:
                        stack.append(other)


def _backbone(callee: str, call: ast.Call) -> tuple[str, str | None] | None:
    """A well-known architecture a library builds (``resnet50(...)``, ``timm.create_model("vit_base…")``)."""
    name = callee
    if callee == "create_model" and call.args and isinstance(call.args[0], ast.Constant):
        name = str(call.args[0].value)
    elif not callee.replace("_", "").isalnum():
        return None
    hit = known_model(name)
    return (name, hit[1]) if hit is not None else None


def inline_model(call: ast.Call, file: str) -> ModelClass:
    """A model built inline (``nn.Sequential(nn.Linear(…), …)``): its layers from the call itself."""
    mc = ModelClass(name="Sequential", file=file, line=call.lineno)
    for node in walk(call):
        if isinstance(node, ast.Call) and node is not call:
            fn = node.func
            callee = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if callee[:1].isupper():
                mc.layer_calls.append(callee)
                mc.layers |= _layer_kinds(callee)
    return mc


def specific_family(text: str) -> str | None:
    """The architecture family a text names by one of the specific families (``FastSpeech 2 - PyTorch
    Implementation``: a TTS model; ``… framework -- Unet, using Keras``: a U-Net), or None; the generic words (resnet,
    lstm, mlp) are not read here: a project's title may mention them in passing."""
    low = text.lower()
    return next((kind for pattern, kind in _SPECIFIC_FAMILIES if re.search(pattern, low)), None)


def model_type_of(names: list[str], mc: ModelClass | None) -> str | None:
    """The architecture family from names (checkpoint id, class, README title) and the class's layers."""
    text = " ".join(n for n in names if n).lower()
    if (specific := specific_family(text)) is not None:
        return specific
    if mc is not None and mc.backbones and mc.backbones[0][1]:
        return mc.backbones[0][1]  # a wrapper around a well-known backbone (SSL heads, projection MLPs)
    for n in names:  # the model is named after a well-known architecture the class receives built (`encoder=`)
        hit = known_model(n) if n else None
        if hit is not None and hit[1]:
            return hit[1]
    if mc is not None and mc.layers:
        if "transformer" in mc.layers and not (
            "rnn" in mc.layers and not any(map(_SELF_ATTENTION.fullmatch, mc.layer_calls))
        ):
            return "decoder_only_transformer"  # (an LSTM decoder with an additive `Attention` module is an RNN)
        if "attention" in mc.layers and mc.layers <= {"attention", "linear", "embedding"}:
            return "decoder_only_transformer"  # attention written by hand, over tokens, with no conv or rnn layers
        if "rnn" in mc.layers:
            return "rnn"  # recurrent layers carry the sequence (a char CNN under BiDAF's LSTMs, CRNN, DeepSpeech2)
        if "conv" in mc.layers:
            return "cnn"
        if mc.layers == {"linear"}:
            return "mlp"
    for pattern, kind in _GENERIC_FAMILIES:
        if re.search(pattern, text):
            return kind
    return None


def layer_census(texts: list[str]) -> str | None:
    """The architecture family of the networks the job's own modules build, when no model was found to name it: the
    layer constructors (``nn.Conv2d``, ``layers.Dense``) and functional layers (``F.conv2d``) called anywhere in
    ``texts``. Only an unambiguous census answers: recurrent layers and no self-attention (an RNN, beside
    convolutions that extract its features or attention written by hand over its states), convolutions and no
    recurrent or attention layers (a CNN), linear layers alone (an MLP); self-attention is no answer.
    TensorFlow's functional layers (``tf.nn.conv2d``, ``tf.layers.dense``) count as PyTorch's do."""
    kinds: set[str] = set()
    attention: set[str] = set()  # the constructors named for attention (`Attention`, `MultiHeadAttention`)
    for text in texts:
        try:
            tree = parse(text)
        except SyntaxError:
            continue
        for node in walk(tree):
            if isinstance(node, ast.FunctionDef) and _attends(node):  # a method or a function (TF1's layers are
                kinds.add("attention")  # functions: `def multihead_attention(queries, keys, ...)`)
            if not isinstance(node, ast.Call):
                continue
            fn = node.func
            callee = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            if not callee:
                continue
            if callee[0].isupper():
                found = _layer_kinds(callee, keras=True)
                kinds |= found
                if "transformer" in found:
                    attention.add(callee)
            elif isinstance(fn, ast.Attribute) and len(node.args) >= 2:  # an input and a weight: not an activation
                receiver = last_names([fn.value])
                tf_layer = receiver & {"nn", "layers"} and _dotted_root(fn) in ("tf", "tensorflow")
                table = (
                    _FUNCTIONAL_LAYERS if receiver & {"F", "functional"} else _TF_FUNCTIONAL_LAYERS if tf_layer else ()
                )
                for pattern, kind in table:
                    if re.fullmatch(pattern, callee):
                        kinds.add(kind)
    if any(_SELF_ATTENTION.fullmatch(c) for c in attention):
        return None  # self-attention layers: a transformer of some kind, which the census cannot tell
    if "rnn" in kinds:  # the recurrent layers are the sequence model, with a convolutional front end (CRNN,
        return "rnn"  # DeepSpeech2, ELMo's character CNN) or attention written by hand over their states (Bahdanau's)
    if kinds & {"attention", "transformer"}:
        return None  # attention and no recurrence: self-attention written by hand
    if "conv" in kinds:
        return "cnn"
    return "mlp" if kinds == {"linear"} else None


_SFT_DATA: Final = re.compile(r"(?:^|[-_/ ])(?:sft|instruct(?:ions?)?)(?:[-_/ ]|$)", re.I)
_INSTRUCTION: Final = re.compile(
    r"###\s*(?:Instruction|Response)|\binstruction\b.{0,80}\b(?:input|output|response)\b|\bapply_chat_template\(|"
    r"\bget_conv(?:ersation)?_template\(|\bconv(?:ersation)?\.roles\b|"  # chat turns in a conversation template
    r"<\|im_start\|>|[\"'](?:user|human)[\"']\s*:.{0,200}?[\"'](?:assistant|gpt)[\"']|"  # ChatML turns, a roles table
    r"[\"']conversations[\"'].{0,400}?==\s*[\"'](?:human|user)[\"']",  # chat turns told apart by speaker (Baichuan2)
    re.I | re.S,
)


def task_of(
    model_type: str | None,
    *,
    code: str,
    hints: str,
    pretrained: bool,
    stage: str | None,
    trainer: str | None = None,
    tokens: bool = False,
    reached: str = "",
    dataset: str = "",
) -> str | None:
    """The training task from the trainer stage, the model family, model heads and wording in code/README;
    ``tokens``: the model embeds tokens (an embedding table and no convolution); ``reached``: the text of the
    modules and configs the entry reaches (where a classifier's loss may be written); ``dataset``: the data's name;
    ``trainer``: the library trainer class the job builds where its code runs (then a trainer's name elsewhere in the
    code, in an arm its settings rule out, says nothing)."""
    stages = {"sft": "instruction_finetuning", "dpo": "preference_optimization_dpo", "pt": "language_modeling",
              "rm": "preference_optimization_dpo", "kto": "preference_optimization_dpo"}  # fmt: skip
    if stage and stage in stages:
        return stages[stage]
    if trainer is None and re.search(r"\bDPOTrainer\b", code):
        return "preference_optimization_dpo"
    if trainer is None and re.search(r"\bSFTTrainer\b", code):
        return "instruction_finetuning"
    for head, task in _HF_HEAD_TASKS:
        if head in code and not (head == "ForSequenceClassification" and re.search(r"(?i)reward", code)):
            return task  # (a sequence classifier scoring rewards serves an RLHF job, not a classification task)
    if model_type in _TASK_BY_TYPE:
        return _TASK_BY_TYPE[model_type]
    low = hints.lower()
    for pattern, task in (
        (r"text[-_ ]to[-_ ]speech|\btts\b|tacotron|fastspeech|vocoder|hifi-?gan|waveglow|melgan", "text_to_speech"),
        (r"semantic segmentation|segmentation", "semantic_segmentation"),
        (r"object detection", "object_detection"),
        (r"super[-_ ]?resolution", "image_super_resolution"),
        (r"diffusion|rectified[-_ ]flow|flow[-_ ]matching", "image_generation_diffusion"),
    ):
        if task == "image_generation_diffusion" and dataset_task(dataset) == "language_modeling":
            continue  # a diffusion model of text (masked diffusion over OpenWebText's tokens) generates no images
        if re.search(pattern, low):
            return task
    if model_type == "decoder_only_transformer":
        if pretrained and (_INSTRUCTION.search(code) or _SFT_DATA.search(dataset) or _INSTRUCTION.search(reached)):
            return "instruction_finetuning"  # the code (or a data module it reaches) formats instruction/response
            # pairs or chat turns, or the data is named as supervised fine-tuning data (`allenai/tulu-3-sft-mixture`)
        return "language_model_finetuning" if pretrained else "language_modeling"
    if model_type == "encoder_only_transformer":  # an encoder trained from scratch learns by masked tokens; a
        return None if pretrained and _EMBEDS_SENTENCES.search(code) else "masked_language_modeling"  # checkpoint
        # tuned into a sentence embedder or reranker (sentence-transformers) is not
    if (
        (model_type == "rnn" or (model_type is None and tokens))
        and (re.search(r"\bvocab", code) or _shifted_targets(code))
        and not re.search(r"n(?:um)?_classes|\bclasses\b|\blabels?\b|sentiment", code)
    ):
        return "language_modeling"  # a recurrent net over a vocabulary, predicting tokens rather than labels
    if (
        model_type == "rnn" and _CLASSIFIES.search(code)
        and re.search(r"\btorchvision\b|\bImageFolder\b|transforms\.ToTensor", code)
    ):  # fmt: skip
        return "image_classification"  # a recurrent net reading images (row by row) against class labels
    if re.search(r"\bpsnr\b|calculate_psnr|peak_signal_noise_ratio", code, re.I):  # an image restoration job
        return "image_super_resolution" if re.search(r"super[-_ ]?resolution|upscale|\bscale\b", code, re.I) else None
    if (
        (model_type in ("cnn", "mlp", "vision_transformer") and _CLASSIFIES.search(f"{code}\n{reached}"))
        or re.search(r"num_classes|accuracy|classif", low)
    ) and not re.search(r"\bimage generation|\bgenerative\b|\bsynthesis\b", low):
        return "image_classification"  # an image model trained against class labels (no flow, VAE or GAN loss;
        # not where the project says it generates: class-conditional generation)
    return None


_SHIFT_DOWN: Final = re.compile(r"([\w.]+)\[(?:[^\[\]]*,\s*)?:\s*-1\s*\]")  # `chunk[:-1]`, `x[:, :-1]`
_SHIFT_UP: Final = re.compile(r"([\w.]+)\[(?:[^\[\]]*,\s*)?1\s*:\s*\]")  # `chunk[1:]`, `x[:, 1:]`


def _shifted_targets(code: str) -> bool:
    """Whether one sequence is read twice, once without its last item and once without its first
    (``inp = chunk[:-1]; target = chunk[1:]``): each position's target is the next token, next-token prediction."""
    return bool({m.group(1) for m in _SHIFT_DOWN.finditer(code)} & {m.group(1) for m in _SHIFT_UP.finditer(code)})


# A library that trains an encoder into a sentence embedder or a reranker (its losses, not masked tokens)
_EMBEDS_SENTENCES: Final = re.compile(r"^\s*(?:from|import) sentence_transformers\b", re.M)

# What a classifier's training code computes: a cross-entropy over class labels, top-k accuracy, a class count
_CLASSIFIES: Final = re.compile(
    r"(?<!binary_)cross_?entropy|CrossEntropyLoss|nll_loss|NLLLoss|num_?classes|n_classes|nclass|\baccuracy\b|"
    r"\btop[-_]?[15]\b|\btopk\b|classif|label_smoothing|LabelSmoothing|SoftTargetCrossEntropy",
    re.I,
)


@functools.cache
def _char_level() -> frozenset[str]:
    rows = json.loads(_DATASETS_FILE.read_text(encoding="utf-8"))["datasets"]
    return frozenset(r["name"] for r in rows if r.get("char_level"))


def char_level_dataset(name: str | None) -> bool:
    """Whether ``name`` (a canonical name) is a corpus read a character at a time (enwik8, text8)."""
    return name is not None and name in _char_level()


def canonical_dataset(text: str) -> str | None:
    """The canonical name of the first well-known dataset mentioned in ``text``."""
    low = text.lower()
    for pattern, name in _datasets():
        if pattern.search(low):
            return name
    return None


_READMES: Final = ("README.md", "readme.md", "Readme.md", "README.MD", "README.rst", "README", "readme", "README.txt")
_HEADING: Final = re.compile(r"^#\s+(?!!\[)(.+)")  # a Markdown heading that is not a badge image


def _readme_lines(ws: Workspace, limit: int) -> list[str] | None:
    """The first ``limit`` lines of the repository's README (the first of the usual names present), or None."""
    for name in _READMES:
        text = ws.read_text_or_none(name)
        if text is not None:
            return text.splitlines()[:limit]
    return None


def readme_lead(ws: Workspace) -> str:
    """The README's first heading and the paragraph right under it (what the project says it does: VDSR's
    "Implementation of … Accurate Image Super-Resolution …"), at most 400 characters; a README that opens with prose
    before any heading leads with that paragraph ("This is a PyTorch Tutorial to Super-Resolution.")."""
    lines = _readme_lines(ws, 60)
    if lines is None:
        return ""
    at = next((i for i, ln in enumerate(lines) if _HEADING.match(ln.strip())), None)
    opening = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if opening is not None and (at is None or opening < at) and re.match(r"[A-Za-z*_]", lines[opening].strip()):
        at = opening - 1  # (prose before any heading: the opening paragraph, not a badge, a table or markup)
    if at is None:
        return ""
    para: list[str] = []
    for ln in lines[at + 1 :]:
        if not ln.strip():
            if para:
                break
            continue
        if ln.lstrip().startswith(("#", "!", "[", "<", "|", "```")):
            break
        para.append(ln.strip())
    return " ".join([lines[at].strip().lstrip("# ") if at >= 0 else "", *para]).strip()[:400]


# A README line about the data a model is trained on ("Download the LJ Speech dataset", "trained on CASIA-WebFace"),
# not a benchmark it was compared on or a protocol it follows
_DATA_SENTENCE: Final = re.compile(r"(?i)train|download|data|corpus")


def readme_datasets(ws: Workspace, limit: int = 400) -> list[str]:
    """The well-known datasets the README's first ``limit`` lines name where they speak of training or data, each
    once, in the order the table lists them.

    A more specific name claims its span first (``CIFAR-100`` is not also ``CIFAR-10``, ``ImageNet-1k`` not also
    ``ImageNet``), so one dataset mentioned in several spellings counts once."""
    lines = _readme_lines(ws, limit)
    if not lines:
        return []
    low = "\n".join(ln for ln in lines if _DATA_SENTENCE.search(ln)).lower()
    claimed: list[tuple[int, int]] = []
    named: list[str] = []
    for pattern, name in _datasets():
        for m in pattern.finditer(low):
            if m.end() > m.start() and not any(m.start() < e and s < m.end() for s, e in claimed):
                claimed.append(m.span())
                if name not in named:
                    named.append(name)
    return named


def readme_command_dataset(ws: Workspace, command: str, limit: int = 400) -> str | None:
    """The one well-known dataset the README names in the prose that introduces this very command ("for celebA"
    above ``python train.py --mixing LMDB_PATH``): the paragraph right above it (three lines at most, not another
    command or a heading). The command must appear whole (backslash continuations joined, spaces squeezed)."""
    lines = _readme_lines(ws, limit)
    want = " ".join(command.split())
    if not lines or len(want) < 8:
        return None
    for at, line in enumerate(lines):
        joined, end = line.rstrip(), at
        while joined.endswith("\\") and end + 1 < len(lines) and end - at < 40:
            end += 1
            joined = joined[:-1] + " " + lines[end].strip()
        text = " ".join(joined.strip().lstrip("$>` ").split())
        if text.rstrip("`") != want:
            continue
        intro: list[str] = []  # the paragraph right above (past blank lines and a code fence), three lines at most
        for prev in reversed(lines[max(0, at - 8) : at]):
            stripped = prev.strip()
            if not stripped or stripped.startswith("```"):
                if intro:
                    break
                continue
            if stripped.startswith(("$", ">", "#")) or len(intro) == 3:
                break  # another command, or a heading
            intro.append(stripped)
        named = {name for pattern, name in _datasets() for t in intro if pattern.search(t.lower())}
        return named.pop() if len(named) == 1 else None
    return None


def readme_title(ws: Workspace) -> str:
    """The first Markdown heading of the repository's README (often the model's or the task's name)."""
    for line in _readme_lines(ws, 40) or []:
        if m := _HEADING.match(line.strip()):
            return m.group(1).strip()
    return ""
