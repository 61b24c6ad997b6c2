"""The model zoo: real architectures with random weights (nothing is downloaded), as a new user
would bring them: every torchvision classification model up to 100 M parameters, the torchvision
segmentation models, and Hugging Face `transformers` models built from small random configs.

Each entry builds (module in eval mode, example inputs as a tuple of tensors, input names, output
names); weights come from torch's default initialisation under a fixed seed (SEED + a stable hash
of the name). Runs under the zoo's own Python (bench/zoo/setup.sh: torch 2.14.1, torchvision
0.29.1, transformers), never the core one.
"""
import zlib

SEED = 20261124
MAX_PARAMS = 100_000_000

# torchvision classification models (ordered small to large within a family). Those over
# MAX_PARAMS (vgg*, wide_resnet101_2, regnet_x_32gf, regnet_y_32gf / 128gf, efficientnet_v2_l,
# convnext_large, vit_l_*, vit_h_14) are left out by the parameter count, not by name.
CLASSIFICATION = [
    "alexnet", "resnet18", "resnet34", "resnet50", "resnet101", "resnet152", "resnext50_32x4d",
    "resnext101_32x8d", "resnext101_64x4d", "wide_resnet50_2", "densenet121", "densenet161", "densenet169",
    "densenet201", "inception_v3", "googlenet", "squeezenet1_0", "squeezenet1_1", "shufflenet_v2_x0_5",
    "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0", "mobilenet_v2", "mobilenet_v3_small",
    "mobilenet_v3_large", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3", "efficientnet_b0",
    "efficientnet_b1", "efficientnet_b2", "efficientnet_b3", "efficientnet_b4", "efficientnet_b5",
    "efficientnet_b6", "efficientnet_b7", "efficientnet_v2_s", "efficientnet_v2_m", "regnet_x_400mf",
    "regnet_x_800mf", "regnet_x_1_6gf", "regnet_x_3_2gf", "regnet_x_8gf", "regnet_x_16gf", "regnet_y_400mf",
    "regnet_y_800mf", "regnet_y_1_6gf", "regnet_y_3_2gf", "regnet_y_8gf", "regnet_y_16gf", "convnext_tiny",
    "convnext_small", "convnext_base", "vit_b_16", "vit_b_32", "swin_t", "swin_s", "swin_b", "swin_v2_t",
    "swin_v2_s", "swin_v2_b", "maxvit_t",
]
SEGMENTATION = ["fcn_resnet50", "fcn_resnet101", "deeplabv3_resnet50", "deeplabv3_resnet101",
                "deeplabv3_mobilenet_v3_large", "lraspp_mobilenet_v3_large"]
# Hugging Face architectures: name -> (config class, model class, kind, config overrides).
TEXT = dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
            max_position_embeddings=128)
VISION = dict(image_size=224, hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256)
TRANSFORMERS = {
    "hf_bert": ("BertConfig", "BertModel", "text", TEXT),
    "hf_distilbert": ("DistilBertConfig", "DistilBertModel", "text",
                      dict(vocab_size=1000, dim=128, n_layers=2, n_heads=4, hidden_dim=256, max_position_embeddings=128)),
    "hf_roberta": ("RobertaConfig", "RobertaModel", "text", dict(TEXT, max_position_embeddings=130)),
    "hf_xlm_roberta": ("XLMRobertaConfig", "XLMRobertaModel", "text", dict(TEXT, max_position_embeddings=130)),
    "hf_albert": ("AlbertConfig", "AlbertModel", "text", dict(TEXT, embedding_size=64)),
    "hf_electra": ("ElectraConfig", "ElectraModel", "text", dict(TEXT, embedding_size=64)),
    "hf_mobilebert": ("MobileBertConfig", "MobileBertModel", "text",
                      dict(TEXT, embedding_size=64, intra_bottleneck_size=64, true_hidden_size=64,
                           num_feedforward_networks=2)),
    "hf_mpnet": ("MPNetConfig", "MPNetModel", "text", dict(TEXT, max_position_embeddings=130)),
    "hf_deberta_v2": ("DebertaV2Config", "DebertaV2Model", "text", TEXT),
    "hf_gpt2": ("GPT2Config", "GPT2Model", "causal", dict(vocab_size=1000, n_embd=128, n_layer=2, n_head=4,
                                                        n_positions=128, use_cache=False)),
    "hf_gpt_neo": ("GPTNeoConfig", "GPTNeoModel", "causal",
                   dict(vocab_size=1000, hidden_size=128, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
                        max_position_embeddings=128, use_cache=False)),
    "hf_opt": ("OPTConfig", "OPTModel", "causal", dict(vocab_size=1000, hidden_size=128, num_hidden_layers=2,
                                                      num_attention_heads=4, ffn_dim=256, word_embed_proj_dim=128,
                                                      max_position_embeddings=128, use_cache=False)),
    "hf_t5_encoder": ("T5Config", "T5EncoderModel", "text_ids", dict(vocab_size=1000, d_model=128, d_kv=32, d_ff=256,
                                                                    num_layers=2, num_heads=4)),
    "hf_bart_encoder": ("BartConfig", "BartModel", "encoder",
                        dict(vocab_size=1000, d_model=128, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                             decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256,
                             max_position_embeddings=128)),
    "hf_vit": ("ViTConfig", "ViTModel", "image", VISION),
    "hf_deit": ("DeiTConfig", "DeiTModel", "image", VISION),
    "hf_beit": ("BeitConfig", "BeitModel", "image", VISION),
    "hf_dinov2": ("Dinov2Config", "Dinov2Model", "image", dict(VISION, mlp_ratio=2)),
    "hf_swin": ("SwinConfig", "SwinModel", "image", dict(image_size=224, embed_dim=32, depths=[1, 1, 2, 1],
                                                        num_heads=[1, 2, 4, 8])),
    "hf_convnext": ("ConvNextConfig", "ConvNextModel", "image", dict(hidden_sizes=[32, 64, 128, 256], depths=[1, 1, 2, 1])),
    "hf_poolformer": ("PoolFormerConfig", "PoolFormerModel", "image", dict(hidden_sizes=[32, 64, 128, 256],
                                                                         depths=[1, 1, 2, 1])),
    "hf_mobilevit": ("MobileViTConfig", "MobileViTModel", "image", dict(image_size=256)),
    "hf_levit": ("LevitConfig", "LevitModel", "image", dict(hidden_sizes=[64, 128, 192], num_attention_heads=[2, 4, 6],
                                                           depths=[1, 1, 1], key_dim=[16, 16, 16])),
    "hf_segformer": ("SegformerConfig", "SegformerForSemanticSegmentation", "image_logits",
                     dict(hidden_sizes=[16, 32, 64, 128], depths=[1, 1, 1, 1], decoder_hidden_size=64, num_labels=8)),
    "hf_wav2vec2": ("Wav2Vec2Config", "Wav2Vec2Model", "audio",
                    dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4, intermediate_size=256,
                         conv_dim=(32, 32, 32), conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3), num_conv_pos_embeddings=16,
                         num_conv_pos_embedding_groups=4)),
    "hf_whisper_encoder": ("WhisperConfig", "WhisperModel", "mel",
                           dict(vocab_size=1000, d_model=128, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                                decoder_attention_heads=4, encoder_ffn_dim=256, decoder_ffn_dim=256, num_mel_bins=80,
                                max_source_positions=1500, pad_token_id=0, bos_token_id=1, eos_token_id=2,
                                decoder_start_token_id=1)),
    "hf_clip_vision": ("CLIPVisionConfig", "CLIPVisionModel", "image", dict(VISION, patch_size=32)),
    "hf_clip_text": ("CLIPTextConfig", "CLIPTextModel", "text_ids", dict(vocab_size=1000, hidden_size=128,
                                                                       num_hidden_layers=2, num_attention_heads=4,
                                                                       intermediate_size=256, max_position_embeddings=77)),
}

# The CI smoke test (tests/e2e/test_zoo_smoke.py): small and of different families.
SMOKE = ["squeezenet1_1", "mobilenet_v3_small", "shufflenet_v2_x0_5", "hf_bert", "hf_vit"]


def all_names():
    return CLASSIFICATION + SEGMENTATION + list(TRANSFORMERS)


def family(name):
    if name in SEGMENTATION:
        return "torchvision-segmentation"
    if name in TRANSFORMERS:
        return "transformers"
    return "torchvision-classification"


def calibrate(module, inputs):
    """Sets every BatchNorm's running statistics to those of a random batch (two samples like
    `inputs`), so that no BatchNorm is an identity of default statistics and the activations of a
    deep random network stay at a sane scale (without it ResNet-101's logits reach 1e5 and a
    1e-3 relative tolerance measures float32 cancellation, not correctness)."""
    import torch

    bns = [m for m in module.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return module.eval()
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None  # a cumulative average over the calibration batch
    batch = tuple(torch.cat([t, torch.randn_like(t)]) for t in inputs)
    module.train()
    with torch.no_grad():
        module(*batch)
    return module.eval()


def build(name):
    """(module, inputs tuple, input names, output names) for zoo model `name`, weights seeded."""
    import torch

    torch.manual_seed(SEED + zlib.crc32(name.encode()) % 100_000)
    if name in CLASSIFICATION:
        import torchvision

        m = getattr(torchvision.models, name)(weights=None)
        if name in ("inception_v3", "googlenet"):
            m.aux_logits, m.AuxLogits = False, None
            if name == "googlenet":
                m.aux1 = m.aux2 = None
        size = 299 if name == "inception_v3" else 224
        x = torch.randn(1, 3, size, size)
        return calibrate(m, (x,)), (x,), ["image"], ["logits"]
    if name in SEGMENTATION:
        import torchvision

        m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, aux_loss=False)

        class Out(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                return self.inner(x)["out"]

        x = torch.randn(1, 3, 224, 224)
        return calibrate(Out(m), (x,)), (x,), ["image"], ["out"]
    import transformers

    cfg_cls, model_cls, kind, overrides = TRANSFORMERS[name]
    cfg = getattr(transformers, cfg_cls)(**overrides)
    # The eager attention (matmul + softmax): scaled_dot_product_attention has no ONNX export below opset 14.
    cfg._attn_implementation = "eager"
    m = getattr(transformers, model_cls)(cfg).eval()
    g = torch.Generator().manual_seed(SEED)
    if kind in ("text", "causal", "text_ids", "encoder"):
        ids = torch.randint(0, 1000, (1, 32), generator=g)
        mask = torch.ones(1, 32, dtype=torch.int64)
        if kind == "text_ids":
            inputs, names = (ids,), ["input_ids"]
        else:
            inputs, names = (ids, mask), ["input_ids", "attention_mask"]
    elif kind in ("image", "image_logits"):
        size = cfg.image_size if hasattr(cfg, "image_size") and isinstance(cfg.image_size, int) else 224
        inputs, names = (torch.randn(1, 3, size, size, generator=g),), ["pixel_values"]
    elif kind == "audio":
        inputs, names = (torch.randn(1, 16000, generator=g),), ["input_values"]
    else:  # mel
        inputs, names = (torch.randn(1, 80, 3000, generator=g),), ["input_features"]

    class Out(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *args):
            if kind == "encoder":
                out = self.inner.get_encoder()(input_ids=args[0], attention_mask=args[1])
            elif kind == "mel":
                out = self.inner.get_encoder()(args[0])
            elif kind == "causal":  # by name: a decoder's second parameter is past_key_values
                out = self.inner(input_ids=args[0], attention_mask=args[1])
            else:
                out = self.inner(*args)
            if kind == "image_logits":
                return out.logits
            return out.last_hidden_state

    return Out(m).eval(), inputs, names, ["output"]
