//! The tiny CLIP of `assets/clip-tiny` (written by `tools/clip_fixture.py`
//! with transformers), loaded through the real loading code, must give
//! transformers' token ids exactly and its embeddings and logits within 1e-4.

use burn::prelude::Device;
use proprio_reward::RewardError;
use proprio_reward::clip::{ClipModel, Preprocess, pixels};
use safetensors::SafeTensors;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/clip-tiny")
}

fn expected() -> Value {
    let text = std::fs::read_to_string(fixture().join("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &Value) -> Vec<f32> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|row| match row.as_array() {
            Some(r) => r.iter().map(|x| x.as_f64().unwrap() as f32).collect(),
            None => vec![row.as_f64().unwrap() as f32],
        })
        .collect()
}

fn assert_close(what: &str, ours: &[f32], theirs: &[f32], tolerance: f32) {
    assert_eq!(ours.len(), theirs.len(), "{what}: lengths");
    let worst = ours
        .iter()
        .zip(theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(
        worst <= tolerance,
        "{what}: largest difference {worst} > {tolerance}"
    );
}

fn images(e: &Value) -> Vec<image::RgbImage> {
    e["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            let path = fixture().join("images").join(n.as_str().unwrap());
            image::open(path).unwrap().to_rgb8()
        })
        .collect()
}

#[test]
fn the_tiny_checkpoint_matches_transformers() {
    let e = expected();
    let clip = ClipModel::load(&fixture(), &Device::flex()).unwrap();
    let texts: Vec<&str> = e["texts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for (text, ids) in texts.iter().zip(e["input_ids"].as_array().unwrap()) {
        let theirs: Vec<u32> = ids
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i.as_u64().unwrap() as u32)
            .collect();
        assert_eq!(clip.tokenize(text), theirs, "token ids of {text:?}");
    }
    let text_embeds = clip.embed_texts(&texts).unwrap();
    assert_close(
        "text_embeds",
        &text_embeds.values,
        &floats(&e["text_embeds"]),
        1e-4,
    );

    let pictures = images(&e);
    let image_embeds = clip.embed_images(&pictures).unwrap();
    // The first two images are at the input size (no resampling): exact
    // numerics; the third is resized, which the next test compares.
    let dim = image_embeds.dim;
    let theirs = floats(&e["image_embeds"]);
    assert_close(
        "image_embeds",
        &image_embeds.values[..2 * dim],
        &theirs[..2 * dim],
        1e-4,
    );
    assert_close(
        "image_embeds (resized)",
        &image_embeds.values[2 * dim..],
        &theirs[2 * dim..],
        5e-3,
    );
    let logits = clip.logits_per_image(&image_embeds, &text_embeds);
    let n = texts.len();
    assert_close(
        "logits_per_image",
        &logits[..2 * n],
        &floats(&e["logits_per_image"])[..2 * n],
        1e-4,
    );
}

#[test]
fn an_image_embeds_the_same_whatever_its_batch_and_thread_count() {
    let clip = ClipModel::load(&fixture(), &Device::flex()).unwrap();
    let pictures = images(&expected());
    let dim = clip.embed_images(&pictures[..1]).unwrap().dim;
    let alone: Vec<f32> = pictures
        .iter()
        .flat_map(|p| clip.embed_images(std::slice::from_ref(p)).unwrap().values)
        .collect();
    for threads in [1, 2, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        // With 2 and 3 threads the batch is embedded in 2 and 3 chunks side by side.
        let batched = pool.install(|| clip.embed_images(&pictures).unwrap());
        assert_eq!(batched.values.len(), pictures.len() * dim);
        assert_close(
            &format!("batch of 3 on {threads} threads vs one by one"),
            &batched.values,
            &alone,
            1e-6,
        );
    }
}

/// The pixels themselves, including the 45×36 image that is resized (bicubic) and cropped.
#[test]
fn preprocessing_matches_transformers() {
    let e = expected();
    let theirs = floats(&e["pixel_values"]);
    let ours = pixels(&images(&e), &Preprocess::for_image_size(30));
    let per_image = 3 * 30 * 30;
    assert_close(
        "pixels of the 30×30 images",
        &ours[..2 * per_image],
        &theirs[..2 * per_image],
        1e-5,
    );
    // The resized image: PIL's bicubic and the image crate's Catmull-Rom are
    // the same kernel (a = −0.5) but weigh and round the noisy pixels apart
    // (one 8-bit step is 1/255/std ≈ 0.015 after normalisation).
    let resized = &ours[2 * per_image..];
    let reference = &theirs[2 * per_image..];
    let mean = resized
        .iter()
        .zip(reference)
        .map(|(a, b)| (a - b).abs())
        .sum::<f32>()
        / per_image as f32;
    assert!(
        mean < 0.02,
        "pixels of the resized image: mean difference {mean}"
    );
    assert_close("pixels of the resized image", resized, reference, 0.2);
}

/// A copy of the fixture in a fresh directory, for tests that break it.
fn copy_fixture(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("proprio-clip-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for file in [
        "config.json",
        "model.safetensors",
        "merges.txt",
        "preprocessor_config.json",
    ] {
        std::fs::copy(fixture().join(file), dir.join(file)).unwrap();
    }
    dir
}

/// Rewrites `model.safetensors` in `dir` with `edit` applied to its tensors.
fn rewrite_weights(
    dir: &Path,
    edit: impl Fn(&str, Vec<usize>, Vec<u8>) -> Option<(Vec<usize>, Vec<u8>)>,
) {
    let bytes = std::fs::read(dir.join("model.safetensors")).unwrap();
    let tensors = SafeTensors::deserialize(&bytes).unwrap();
    let mut kept = Vec::new();
    for (name, view) in tensors.tensors() {
        if let Some((shape, data)) = edit(&name, view.shape().to_vec(), view.data().to_vec()) {
            kept.push((name, view.dtype(), shape, data));
        }
    }
    let views: Vec<(String, safetensors::tensor::TensorView)> = kept
        .iter()
        .map(|(name, dtype, shape, data)| {
            (
                name.clone(),
                safetensors::tensor::TensorView::new(*dtype, shape.clone(), data).unwrap(),
            )
        })
        .collect();
    safetensors::serialize_to_file(views, None, &dir.join("model.safetensors")).unwrap();
}

#[test]
fn a_mis_shaped_or_missing_tensor_is_named() {
    let dir = copy_fixture("shape");
    rewrite_weights(&dir, |name, shape, data| {
        if name == "text_projection.weight" {
            // [16, 32] → [16, 31]: one input column dropped.
            let rows: Vec<u8> = data
                .chunks(32 * 4)
                .flat_map(|r| r[..31 * 4].to_vec())
                .collect();
            Some((vec![shape[0], 31], rows))
        } else {
            Some((shape, data))
        }
    });
    let error = ClipModel::load(&dir, &Device::flex()).err().unwrap();
    let message = error.to_string();
    assert!(
        matches!(&error, RewardError::Shape { tensor, .. } if tensor.contains("text_projection")),
        "{message}"
    );
    assert!(
        message.contains("[31, 16]") || message.contains("[16, 31]"),
        "{message}"
    );
    assert!(
        message.contains("[32, 16]") || message.contains("[16, 32]"),
        "{message}"
    );

    let dir = copy_fixture("missing");
    rewrite_weights(&dir, |name, shape, data| {
        (name != "vision_model.post_layernorm.weight").then_some((shape, data))
    });
    let error = ClipModel::load(&dir, &Device::flex()).err().unwrap();
    assert!(
        matches!(&error, RewardError::Missing { tensor, .. } if tensor.contains("post_layernorm")),
        "{error}"
    );
}

#[test]
fn an_unknown_architecture_or_a_missing_directory_is_a_clear_error() {
    let dir = copy_fixture("arch");
    let config = std::fs::read_to_string(dir.join("config.json")).unwrap();
    std::fs::write(
        dir.join("config.json"),
        config.replace("\"model_type\": \"clip\"", "\"model_type\": \"siglip\""),
    )
    .unwrap();
    let error = ClipModel::load(&dir, &Device::flex())
        .err()
        .unwrap()
        .to_string();
    assert!(error.contains("unknown architecture 'siglip'"), "{error}");
    assert!(error.contains("config.json"), "{error}");
    let error = ClipModel::load(Path::new("/no/such/model"), &Device::flex())
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("/no/such/model") && error.contains("not a model directory"),
        "{error}"
    );
}
