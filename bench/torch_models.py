"""The benchmark's torch models, written with torch.nn: ResNet-50, MobileNetV2, BERT-base,
torch.nn.LSTM / GRU (2 layers, bidirectional), and a greedy decoder whose export is an ONNX Loop.

Nothing is downloaded: the layer configurations follow torchvision's `resnet50` (ResNet v1.5, the
stride on the 3x3 conv of a bottleneck) and `mobilenet_v2` (width 1.0), and Hugging Face's
`bert-base-uncased` configuration (12 layers, hidden 768, 12 heads, intermediate 3072, vocabulary
30522, GELU with erf, LayerNorm eps 1e-12). Weights are random, fixed by a seed; BatchNorm running
statistics are calibrated on a random batch and the affine parameters randomised, so that no
BatchNorm is an identity and activations stay at a sane scale through 50 layers.

Used by bench/export_models (ONNX export), bench/run_e2e (PyTorch eager / torch.compile peers on
the original modules) and tests/e2e/test_accuracy_vs_ort.py.
"""
import math

import torch
from torch import nn

SEED = 20240501


# --------------------------------------------------------------------------- ResNet-50 (v1.5)
class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, width, stride):
        super().__init__()
        cout = width * self.expansion
        self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(cout)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = None
        if stride != 1 or cin != cout:
            self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        idt = x if self.downsample is None else self.downsample(x)
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + idt)


class ResNet50(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        cin, layers = 64, []
        for width, blocks, stride in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]:
            stage = []
            for b in range(blocks):
                stage.append(Bottleneck(cin, width, stride if b == 0 else 1))
                cin = width * Bottleneck.expansion
            layers.append(nn.Sequential(*stage))
        self.layer1, self.layer2, self.layer3, self.layer4 = layers
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(2048, num_classes)
        for m in self.modules():  # torchvision's initialisation
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


# --------------------------------------------------------------------------- MobileNetV2
def conv_bn_relu6(cin, cout, k, stride, groups=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU6(inplace=True))


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        self.use_res = stride == 1 and cin == cout
        layers = [conv_bn_relu6(cin, hidden, 1, 1)] if expand != 1 else []
        layers += [conv_bn_relu6(hidden, hidden, 3, stride, groups=hidden),
                   nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        return x + self.conv(x) if self.use_res else self.conv(x)


class MobileNetV2(nn.Module):
    # t (expansion), c (channels), n (repeats), s (stride of the first) -- torchvision / the paper
    SETTING = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
               (6, 320, 1, 1)]

    def __init__(self, num_classes=1000):
        super().__init__()
        cin, feats = 32, [conv_bn_relu6(3, 32, 3, 2)]
        for t, c, n, s in self.SETTING:
            for i in range(n):
                feats.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        feats.append(conv_bn_relu6(cin, 1280, 1, 1))
        self.features = nn.Sequential(*feats)
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(1280, num_classes))
        for m in self.modules():  # torchvision's initialisation
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, 0, 0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
        return self.classifier(torch.flatten(x, 1))


# --------------------------------------------------------------------------- BERT-base
class BertLayer(nn.Module):
    def __init__(self, hidden=768, heads=12, inter=3072, eps=1e-12):
        super().__init__()
        self.heads, self.dh = heads, hidden // heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=eps)
        self.inter = nn.Linear(hidden, inter)
        self.act = nn.GELU()  # exact (erf), as BERT
        self.out = nn.Linear(inter, hidden)
        self.out_norm = nn.LayerNorm(hidden, eps=eps)

    def split(self, x):  # [B, S, H] -> [B, heads, S, dh]
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.dh).transpose(1, 2)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + mask_bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        ctx = ctx.transpose(1, 2).reshape(x.shape)
        x = self.attn_norm(x + self.attn_out(ctx))
        return self.out_norm(x + self.out(self.act(self.inter(x))))


class BertBase(nn.Module):
    """Inputs: input_ids, attention_mask, token_type_ids (int64 [B, S]).
    Outputs: last_hidden_state [B, S, 768], pooler_output [B, 768]."""

    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, inter=3072, max_pos=512, types=2):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(types, hidden)
        self.emb_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, inter) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)
        for m in self.modules():  # BERT's initialisation (initializer_range 0.02), biases made non-zero
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0, 0.02)
            if isinstance(m, nn.Linear):
                nn.init.normal_(m.bias, 0, 0.02)
            if isinstance(m, nn.LayerNorm):
                nn.init.normal_(m.weight, 1.0, 0.1)
                nn.init.normal_(m.bias, 0, 0.1)

    def forward(self, input_ids, attention_mask, token_type_ids):
        s = input_ids.shape[1]
        pos = torch.arange(s, dtype=torch.int64).unsqueeze(0)
        x = self.emb_norm(self.word(input_ids) + self.position(pos) + self.token_type(token_type_ids))
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x, torch.tanh(self.pooler(x[:, 0]))


# --------------------------------------------------------------------------- LSTM / GRU
RNN_SEQ_LEN, RNN_INPUT, RNN_HIDDEN = 64, 128, 256


class Recurrent(nn.Module):
    """torch.nn.LSTM or GRU: 2 layers, bidirectional, batch_first, input 128, hidden 256 (the ONNX
    export is two LSTM / GRU nodes, one per layer). Input: x [1, 64, 128]. Outputs: y [1, 64, 512],
    h_n [4, 1, 256], and c_n [4, 1, 256] for the LSTM."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell
        rnn = nn.LSTM if cell == "lstm" else nn.GRU
        self.rnn = rnn(RNN_INPUT, RNN_HIDDEN, num_layers=2, bidirectional=True, batch_first=True)

    def forward(self, x):
        y, state = self.rnn(x)
        return (y, *state) if self.cell == "lstm" else (y, state)


GREEDY_VOCAB, GREEDY_HIDDEN, GREEDY_MAX_TOKENS, GREEDY_EOS = 1000, 256, 64, 1


class GreedyDecoder(nn.Module):
    """Greedy decoding with a recurrent cell, written as a `while` loop and scripted (torch.jit.script),
    so that the ONNX export is one Loop node (a run-time exit: the end token or max_len, whichever comes
    first). Each step: e = Embedding(tok); h = tanh(Wx e + Wh h); tok = argmax(Wo h); tokens[i] = tok.
    Inputs: h [1, 256] float32, tok [1] int64, max_len [] int64 (at most 64). Outputs: tokens [64] int64
    (0 after the last step), h [1, 256]."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(GREEDY_VOCAB, GREEDY_HIDDEN)
        self.wx = nn.Linear(GREEDY_HIDDEN, GREEDY_HIDDEN)
        self.wh = nn.Linear(GREEDY_HIDDEN, GREEDY_HIDDEN)
        self.out = nn.Linear(GREEDY_HIDDEN, GREEDY_VOCAB)
        self.max_tokens, self.eos = GREEDY_MAX_TOKENS, GREEDY_EOS  # module attributes: TorchScript constants

    def forward(self, h, tok, max_len):
        tokens = torch.zeros(self.max_tokens, dtype=torch.long)
        i = torch.zeros((), dtype=torch.long)
        go = max_len > 0
        while bool(go):
            h = torch.tanh(self.wx(self.emb(tok)) + self.wh(h))
            tok = self.out(h).argmax(-1)
            tokens[i] = tok[0]
            i = i + 1
            go = (i < max_len) & (tok[0] != self.eos)
        return tokens, h


def greedy_decoder():
    return torch.jit.script(GreedyDecoder())


# --------------------------------------------------------------------------- construction
def _randomise_batchnorm(model, example, gen):
    """Calibrate running stats on a random batch (train mode, cumulative average), then randomise
    gamma / beta and perturb the statistics: BN is then neither an identity nor far off scale."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    if not bns:
        return
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    with torch.no_grad():
        model(example)
        for m in bns:
            c = m.num_features
            m.momentum = 0.1
            m.running_mean.add_(0.1 * torch.randn(c, generator=gen) * m.running_var.sqrt())
            m.running_var.mul_(torch.empty(c).uniform_(0.7, 1.4, generator=gen))
            m.weight.copy_(torch.empty(c).uniform_(0.5, 1.5, generator=gen))
            m.bias.copy_(0.1 * torch.randn(c, generator=gen))
    model.eval()


# name -> (constructor, input names, output names)
MODELS = {
    "resnet50": (ResNet50, ["input"], ["logits"]),
    "mobilenetv2": (MobileNetV2, ["input"], ["logits"]),
    "bert-base": (BertBase, ["input_ids", "attention_mask", "token_type_ids"],
                  ["last_hidden_state", "pooler_output"]),
    "lstm": (lambda: Recurrent("lstm"), ["x"], ["y", "h_n", "c_n"]),
    "gru": (lambda: Recurrent("gru"), ["x"], ["y", "h_n"]),
    "greedy-decoder": (greedy_decoder, ["h", "tok", "max_len"], ["tokens", "h_out"]),
}
SEQ_LEN = 128


def example_inputs(name, seed=SEED):
    """The reference input (batch 1, static shapes) as a tuple of tensors in graph-input order."""
    gen = torch.Generator().manual_seed(seed + 1)
    if name == "bert-base":
        ids = torch.randint(1000, 30522, (1, SEQ_LEN), generator=gen, dtype=torch.int64)
        ids[0, 0] = 101  # [CLS]
        mask = torch.ones(1, SEQ_LEN, dtype=torch.int64)
        mask[0, 100:] = 0  # the last 28 positions are padding: the mask is exercised
        types = torch.zeros(1, SEQ_LEN, dtype=torch.int64)
        types[0, 50:100] = 1
        return ids, mask, types
    if name in ("lstm", "gru"):
        return (torch.randn(1, RNN_SEQ_LEN, RNN_INPUT, generator=gen),)
    if name == "greedy-decoder":
        return (torch.randn(1, GREEDY_HIDDEN, generator=gen), torch.tensor([3]), torch.tensor(48))
    return (torch.randn(1, 3, 224, 224, generator=gen),)


def build(name, seed=SEED):
    """The model `name` with random weights fixed by `seed`, in eval mode. Deterministic for a given
    torch version (bench/export_models records the version it exported with)."""
    ctor = MODELS[name][0]
    torch.manual_seed(seed)
    model = ctor()
    gen = torch.Generator().manual_seed(seed + 2)
    if name in ("resnet50", "mobilenetv2"):
        _randomise_batchnorm(model, torch.randn(8, 3, 224, 224, generator=gen), gen)
    return model.eval()
