//! `proprio embed` and `proprio bench-embed`: CLIP embeddings of texts and
//! images from a checkpoint directory, and how fast they come.

use crate::{CliResult, Failure};
use clap::Args;
use proprio::serde_json::{Value, json};
use proprio_learn::ComputeDevice;
use proprio_reward::clip::{ClipConfig, ClipModel, Embeddings};
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct EmbedArgs {
    /// Checkpoint directory in the Hugging Face layout (config.json,
    /// model.safetensors, …); default: $PROPRIO_CLIP_DIR.
    #[arg(long)]
    model: Option<PathBuf>,
    /// A text to embed (repeatable).
    #[arg(long)]
    text: Vec<String>,
    /// An image file (PNG or GIF) to embed (repeatable).
    #[arg(long)]
    image: Vec<PathBuf>,
    /// Where the networks run: cpu (burn flex) or wgpu.
    #[arg(long, default_value = "cpu")]
    device: ComputeDevice,
    /// Print one JSON object: input_ids, text_embeds, image_embeds, logits_per_image.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct BenchEmbedArgs {
    /// Checkpoint directory; without one (and no $PROPRIO_CLIP_DIR), a randomly
    /// initialised model of ViT-B/32's published sizes.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Images per batch.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Timed batches, after one untimed warm-up batch.
    #[arg(long, default_value_t = 5)]
    iterations: usize,
    /// Where the networks run: cpu (burn flex) or wgpu.
    #[arg(long, default_value = "cpu")]
    device: ComputeDevice,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn fail(e: impl std::fmt::Display) -> Failure {
    Failure(e.to_string())
}

fn rows(e: &Embeddings) -> Vec<&[f32]> {
    (0..e.len()).map(|i| e.row(i)).collect()
}

pub fn embed(args: &EmbedArgs) -> CliResult {
    if args.text.is_empty() && args.image.is_empty() {
        return Err(Failure("give at least one --text or --image".into()));
    }
    let dir = args.model.clone().or_else(ClipModel::dir_from_env).ok_or_else(|| {
        Failure("no model: pass --model DIR (a CLIP checkpoint in the Hugging Face layout) or set PROPRIO_CLIP_DIR".into())
    })?;
    let device = args.device.device().map_err(fail)?;
    let clip = ClipModel::load(&dir, &device).map_err(fail)?;
    let images = args
        .image
        .iter()
        .map(|path| {
            image::open(path)
                .map(|i| i.to_rgb8())
                .map_err(|e| Failure(format!("{}: {e}", path.display())))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let texts: Vec<&str> = args.text.iter().map(String::as_str).collect();
    let text_embeds = (!texts.is_empty())
        .then(|| clip.embed_texts(&texts))
        .transpose()
        .map_err(fail)?;
    let image_embeds = (!images.is_empty())
        .then(|| clip.embed_images(&images))
        .transpose()
        .map_err(fail)?;
    let logits = match (&image_embeds, &text_embeds) {
        (Some(i), Some(t)) => Some(clip.logits_per_image(i, t)),
        _ => None,
    };
    if args.json {
        let logits_per_image: Option<Vec<&[f32]>> =
            logits.as_ref().map(|l| l.chunks(texts.len()).collect());
        let report = json!({
            "model": dir,
            "input_ids": texts.iter().map(|t| clip.tokenize(t)).collect::<Vec<_>>(),
            "text_embeds": text_embeds.as_ref().map(rows),
            "image_embeds": image_embeds.as_ref().map(rows),
            "logits_per_image": logits_per_image,
        });
        println!("{report}");
        return Ok(());
    }
    println!(
        "{}: {} texts, {} images, {}-d embeddings",
        dir.display(),
        texts.len(),
        images.len(),
        clip.config().projection_dim
    );
    if let Some(logits) = logits {
        for (path, row) in args.image.iter().zip(logits.chunks(texts.len())) {
            let best = row
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map_or(0, |(k, _)| k);
            let scores: Vec<String> = row.iter().map(|l| format!("{l:.2}")).collect();
            println!(
                "{}: logits [{}], best {:?}",
                path.display(),
                scores.join(", "),
                texts[best]
            );
        }
    }
    Ok(())
}

pub fn bench(args: &BenchEmbedArgs) -> CliResult {
    if args.batch == 0 || args.iterations == 0 {
        return Err(Failure("--batch and --iterations must be positive".into()));
    }
    let device = args.device.device().map_err(fail)?;
    let dir = args.model.clone().or_else(ClipModel::dir_from_env);
    let clip = match &dir {
        Some(dir) => ClipModel::load(dir, &device),
        None => ClipModel::random(ClipConfig::default(), &device),
    }
    .map_err(fail)?;
    let side = clip.config().vision_config.image_size;
    // Frames as the renderer hands them over (u8 RGB), at the model's input size.
    let frames: Vec<u8> = (0..args.batch * side * side * 3)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    clip.embed_frames(&frames, args.batch, side, side, 3)
        .map_err(fail)?;
    let start = Instant::now();
    for _ in 0..args.iterations {
        clip.embed_frames(&frames, args.batch, side, side, 3)
            .map_err(fail)?;
    }
    let seconds = start.elapsed().as_secs_f64();
    let images_per_s = (args.batch * args.iterations) as f64 / seconds;
    let model = dir.map_or(Value::from("random ViT-B/32"), |d| json!(d));
    if args.json {
        println!(
            "{}",
            json!({
                "model": model,
                "device": args.device.to_string(),
                "batch": args.batch,
                "iterations": args.iterations,
                "image_size": side,
                "seconds": seconds,
                "images_per_s": images_per_s,
            })
        );
    } else {
        println!(
            "{model}: {images_per_s:.1} images/s ({} batches of {} at {side}×{side}, {}, preprocessing included)",
            args.iterations, args.batch, args.device
        );
    }
    Ok(())
}
