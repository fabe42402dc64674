//! Writes a fitted CLIP in the Hugging Face hub layout: `config.json`,
//! `model.safetensors` (PyTorch names and layouts, `logit_scale` included)
//! and `preprocessor_config.json`, each written whole before it is renamed
//! into place. OpenAI's vocabulary is the tokenizer, so no `merges.txt`.

use super::{FitConfig, Trainee};
use crate::{Result, RewardError};
use burn::prelude::*;
use burn_store::{BurnToPyTorchAdapter, ModuleSnapshot, SafetensorsStore};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// Saves `model` (trained with `cfg`) into the new directory `dir`; an existing
/// `dir` is refused, so nothing a user has is overwritten.
pub fn save(model: &Trainee, cfg: &FitConfig, dir: &Path, extra: serde_json::Value) -> Result<()> {
    if dir.exists() {
        return Err(RewardError::io(
            dir,
            "already exists; choose a new directory",
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| RewardError::io(dir, e))?;
    let config = cfg.clip_config();
    let mut value = serde_json::to_value(&config).map_err(|e| RewardError::io(dir, e))?;
    if let Some(map) = value.as_object_mut() {
        map.insert("architectures".into(), json!(["CLIPModel"]));
        map.insert("proprio_fit".into(), extra);
    }
    write(&dir.join("config.json"), pretty(&value)?.as_bytes())?;
    let side = cfg.image_size;
    let preprocessor = json!({
        "image_processor_type": "CLIPImageProcessor",
        "do_resize": true, "size": {"shortest_edge": side},
        "do_center_crop": true, "crop_size": {"height": side, "width": side},
        "do_normalize": true, "do_rescale": true, "rescale_factor": 1.0 / 255.0,
        "image_mean": [0.481_454_66, 0.457_827_5, 0.408_210_73],
        "image_std": [0.268_629_5, 0.261_302_6, 0.275_777_1],
        "resample": 3
    });
    write(
        &dir.join("preprocessor_config.json"),
        pretty(&preprocessor)?.as_bytes(),
    )?;
    write(&dir.join("model.safetensors"), &weights(model, dir)?)
}

/// The model's tensors under PyTorch's names and layouts, plus `logit_scale`.
fn weights(model: &Trainee, dir: &Path) -> Result<Vec<u8>> {
    let fail = |e: &dyn std::fmt::Display| {
        RewardError::io(dir, format!("cannot serialise the weights: {e}"))
    };
    let mut store = SafetensorsStore::from_bytes(None).with_to_adapter(BurnToPyTorchAdapter);
    model
        .clip
        .valid()
        .save_into(&mut store)
        .map_err(|e| fail(&e))?;
    let bytes = store.get_bytes().map_err(|e| fail(&e))?;
    let tensors = SafeTensors::deserialize(&bytes).map_err(|e| fail(&e))?;
    let scale = model
        .logit_scale
        .val()
        .into_data()
        .try_into_vec::<f32>()
        .map_err(crate::clip::backend)?;
    let scale = scale.first().copied().unwrap_or_default().to_le_bytes();
    let mut views: BTreeMap<String, TensorView> = tensors.tensors().into_iter().collect();
    let logit = TensorView::new(Dtype::F32, vec![], &scale).map_err(|e| fail(&e))?;
    views.insert("logit_scale".into(), logit);
    let metadata = Some(std::collections::HashMap::from([(
        "format".to_string(),
        "pt".to_string(),
    )]));
    safetensors::serialize(views, metadata).map_err(|e| fail(&e))
}

fn pretty(value: &serde_json::Value) -> Result<String> {
    serde_json::to_string_pretty(value).map_err(|e| RewardError::Input(e.to_string()))
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, and renames it into place.
fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let partial = path.with_extension("partial");
    let mut file = std::fs::File::create(&partial).map_err(|e| RewardError::io(&partial, e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| RewardError::io(&partial, e))?;
    std::fs::rename(&partial, path).map_err(|e| RewardError::io(path, e))
}
