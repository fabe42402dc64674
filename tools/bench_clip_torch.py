"""PyTorch side of `proprio bench-embed`: image embeddings per second of a
randomly initialised transformers CLIPModel with ViT-B/32's published sizes
(`CLIPConfig()`), same batch, preprocessing from u8 frames included.

    /tmp/clip-venv/bin/python tools/bench_clip_torch.py --batch 16 --iterations 3 --threads 2
"""

import argparse
import json
import time

import numpy as np
import torch
from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel

parser = argparse.ArgumentParser()
parser.add_argument("--batch", type=int, default=32)
parser.add_argument("--iterations", type=int, default=5)
parser.add_argument("--threads", type=int, default=torch.get_num_threads())
args = parser.parse_args()
torch.set_num_threads(args.threads)
model = CLIPModel(CLIPConfig()).eval()
processor = CLIPImageProcessor()
frames = list(np.random.default_rng(0).integers(0, 256, (args.batch, 224, 224, 3), dtype=np.uint8))


def embed():
    pixels = processor(images=frames, return_tensors="pt")["pixel_values"]
    with torch.inference_mode():
        # get_image_features' computation (its return type changed in transformers 5).
        features = model.visual_projection(model.vision_model(pixel_values=pixels).pooler_output)
    return torch.nn.functional.normalize(features, dim=-1)


embed()
start = time.perf_counter()
for _ in range(args.iterations):
    embed()
seconds = time.perf_counter() - start
print(json.dumps({"torch": torch.__version__, "threads": args.threads, "batch": args.batch,
                  "iterations": args.iterations, "images_per_s": args.batch * args.iterations / seconds}))
