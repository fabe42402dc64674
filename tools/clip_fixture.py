"""Builds the tiny random CLIP under assets/clip-tiny and records what
transformers computes with it, for the Rust tests to match.

The model is small (two layers per tower, width 32) but has every part of a
real CLIP: its weights are perturbed away from transformers' initial values
(layer norms away from 1 and 0, logit scale away from ln 1/0.07) so a swapped
or untransposed tensor changes the outputs. Its vocabulary is the first 486
merges of OpenAI's (1,000 tokens), so the token ids are OpenAI's for common words.

    python3 -m venv /tmp/clip-venv
    /tmp/clip-venv/bin/pip install torch transformers safetensors pillow numpy
    /tmp/clip-venv/bin/python tools/clip_fixture.py \
        ~/.cargo/registry/src/*/instant-clip-tokenizer-0.1.0/bpe_simple_vocab_16e6.txt
"""

import json
import pathlib
import sys

import numpy as np
import torch
from PIL import Image
from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPTokenizer

VOCAB = 1000
OUT = pathlib.Path(__file__).resolve().parent.parent / "assets" / "clip-tiny"
TEXTS = [
    "a diagram",
    "a humanoid robot",
    "A Robot ARM, touching the green ball!",
    "the cube is on top of the other cube and the gripper is open and it is done",
]


def bytes_to_unicode():
    """OpenAI's byte ↔ printable-character table."""
    bs = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def write_tokenizer(merges_source):
    lines = pathlib.Path(merges_source).read_text(encoding="utf-8").split("\n")
    merges = lines[1 : 1 + VOCAB - 514]
    symbols = bytes_to_unicode()
    vocab = symbols + [s + "</w>" for s in symbols]
    vocab += ["".join(m.split()) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    assert len(vocab) == VOCAB
    (OUT / "vocab.json").write_text(json.dumps({t: i for i, t in enumerate(vocab)}))
    (OUT / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")


def images():
    rng = np.random.default_rng(7)
    noise = rng.integers(0, 256, (30, 30, 3), dtype=np.uint8)
    y, x = np.mgrid[0:30, 0:30]
    gradient = np.stack([x * 8, y * 8, (x + y) * 4], axis=-1).astype(np.uint8)
    wide = rng.integers(0, 256, (36, 45, 3), dtype=np.uint8)
    wide[10:20, 5:40] = [40, 200, 60]
    return {"noise.png": noise, "gradient.png": gradient, "wide.png": wide}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    write_tokenizer(sys.argv[1])
    tokenizer = CLIPTokenizer(str(OUT / "vocab.json"), str(OUT / "merges.txt"), model_max_length=16)
    torch.manual_seed(0)
    config = CLIPConfig(
        text_config=dict(
            vocab_size=VOCAB, hidden_size=32, intermediate_size=37, num_hidden_layers=2,
            num_attention_heads=4, max_position_embeddings=16, hidden_act="quick_gelu",
            bos_token_id=VOCAB - 2, eos_token_id=VOCAB - 1, pad_token_id=VOCAB - 1,
        ),
        vision_config=dict(
            hidden_size=32, intermediate_size=37, num_hidden_layers=2, num_attention_heads=4,
            image_size=30, patch_size=6, hidden_act="gelu",
        ),
        projection_dim=16,
    )
    model = CLIPModel(config).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
        model.logit_scale.fill_(np.log(20.0))
    processor = CLIPImageProcessor(
        size={"shortest_edge": 30}, crop_size={"height": 30, "width": 30}
    )
    model.save_pretrained(OUT, safe_serialization=True)
    processor.save_pretrained(OUT)
    tokenizer.save_pretrained(OUT)

    pictures = images()
    (OUT / "images").mkdir(exist_ok=True)
    for name, array in pictures.items():
        Image.fromarray(array).save(OUT / "images" / name)
    loaded = [Image.open(OUT / "images" / n).convert("RGB") for n in pictures]
    text_inputs = tokenizer(TEXTS, padding=True, truncation=True, return_tensors="pt")
    pixels = processor(images=loaded, return_tensors="pt")["pixel_values"]
    with torch.no_grad():
        out = model(input_ids=text_inputs["input_ids"], attention_mask=text_inputs["attention_mask"],
                    pixel_values=pixels)
    ids = [
        [int(t) for t, m in zip(row, mask) if m]
        for row, mask in zip(text_inputs["input_ids"], text_inputs["attention_mask"])
    ]
    expected = {
        "texts": TEXTS,
        "images": list(pictures),
        "input_ids": ids,
        "text_embeds": out.text_embeds.tolist(),
        "image_embeds": out.image_embeds.tolist(),
        "logits_per_image": out.logits_per_image.tolist(),
        "pixel_values": pixels.flatten(1).tolist(),
        "transformers": __import__("transformers").__version__,
        "torch": torch.__version__,
    }
    (OUT / "expected.json").write_text(json.dumps(expected))
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
