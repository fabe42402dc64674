//! `fit-clip` end to end on a small budget: cart-pole frames with their
//! captions, a few Adam steps that lower the contrastive loss, and a save in
//! the hub layout that `ClipModel::load` reads back to the same numbers.
//! Skipped without any wgpu adapter, unless `PROPRIO_REQUIRE_GPU` is set.

#[path = "support/adapter.rs"]
mod adapter;
use adapter::rendered;
use burn::prelude::*;
use proprio::serde_json::Value;
use proprio::{ActMode, Agent};
use proprio_reward::clip::{ClipModel, Preprocess, frames_to_images, l2_normalize, pixels};
use proprio_reward::fit::{Collect, FitConfig, collect, fit, save};

#[test]
fn a_fitted_clip_learns_saves_and_loads_back_to_the_same_numbers() {
    let cfg = FitConfig {
        image_size: 32,
        patch_size: 8,
        width: 32,
        layers: 1,
        heads: 2,
        projection_dim: 16,
        context: 24,
        steps: 40,
        batch: 32,
        learning_rate: 2e-3,
        ..FitConfig::default()
    };
    let Some(data) = rendered(collect(
        &Collect {
            env: "classic/cartpole-v1",
            config: &Value::Null,
            camera: "default",
            side: 32,
            frames: 300,
            num_envs: 16,
            scripted: 0.0,
            driven: 0.0,
            decoy: 0.0,
            seed: 5,
        },
        None,
    )) else {
        return;
    };
    assert_eq!(data.len(), 300);
    assert!(
        data.captions.len() >= 3,
        "random play shows several pole angles: {:?}",
        data.captions
    );
    assert!(
        data.captions
            .iter()
            .any(|c| c.starts_with("a pole balanced upright"))
    );

    let mut losses = Vec::new();
    let (model, report) = fit(&data, &cfg, |_, loss| losses.push(loss)).unwrap();
    let early: f32 = losses[..5].iter().sum::<f32>() / 5.0;
    let late: f32 = losses[losses.len() - 5..].iter().sum::<f32>() / 5.0;
    assert!(
        late < early - 0.1,
        "the contrastive loss falls: {early} → {late}"
    );
    assert_eq!(report.holdout_frames, 30);

    let dir = std::env::temp_dir().join(format!("proprio-fit-clip-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    save(&model, &cfg, &dir, Value::Null).unwrap();
    let err = save(&model, &cfg, &dir, Value::Null)
        .unwrap_err()
        .to_string();
    assert!(err.contains("already exists"), "{err}");

    let device = Device::flex();
    let loaded = ClipModel::load(&dir, &device).unwrap();
    let frames = &data.images[..4 * 32 * 32 * 3];
    let from_disk = loaded.embed_frames(frames, 4, 32, 32, 3).unwrap();
    let clip = model.clip.valid();
    let images = frames_to_images(frames, 4, 32, 32, 3).unwrap();
    let values = pixels(&images, &Preprocess::for_image_size(32));
    let pixels = Tensor::<4>::from_data(TensorData::new(values, [4, 3, 32, 32]), &device);
    let in_memory = l2_normalize(clip.image_features(pixels))
        .into_data()
        .try_into_vec::<f32>()
        .unwrap();
    for (a, b) in from_disk.values.iter().zip(&in_memory) {
        assert!((a - b).abs() < 1e-5, "{a} vs {b}");
    }
    let scale = model
        .logit_scale
        .val()
        .into_data()
        .try_into_vec::<f32>()
        .unwrap()[0];
    assert!((loaded.scale() - scale.exp()).abs() < 1e-3);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Pushes every cart it drives to the right, and counts the observations it saw.
struct PushRight(usize);

impl Agent for PushRight {
    fn act(&mut self, obs: &[f32], actions: &mut [f32], mode: ActMode) -> proprio::Result<()> {
        assert_eq!(
            mode,
            ActMode::Sampled,
            "a driver samples, as it would in training"
        );
        assert_eq!(
            obs.len(),
            4 * actions.len(),
            "one cart-pole observation per action"
        );
        self.0 += actions.len();
        actions.fill(1.0);
        Ok(())
    }
}

#[test]
fn a_driver_acts_for_its_share_of_the_envs() {
    let collect_with = |driven: f64, driver: Option<&mut dyn Agent>| {
        collect(
            &Collect {
                env: "classic/cartpole-v1",
                config: &Value::Null,
                camera: "default",
                side: 16,
                frames: 80,
                num_envs: 8,
                scripted: 0.0,
                driven,
                decoy: 0.0,
                seed: 5,
            },
            driver,
        )
    };
    let mut driver = PushRight(0);
    let Some(data) = rendered(collect_with(0.5, Some(&mut driver))) else {
        return;
    };
    assert_eq!(data.len(), 80);
    // 8 envs: 4 driven, 4 random; 10 steps of 8 frames.
    assert_eq!(driver.0, 4 * 10);
    let refused = collect_with(1.5, Some(&mut driver))
        .unwrap_err()
        .to_string();
    assert!(refused.contains("add up to at most 1"), "{refused}");
    let refused = collect_with(0.5, None).unwrap_err().to_string();
    assert!(refused.contains("needs a driver"), "{refused}");
}

#[test]
fn decoys_replay_scripted_actions_and_need_a_scripted_share() {
    let collect_with = |scripted: f64| {
        collect(
            &Collect {
                env: "manipulation/reach-v0",
                config: &Value::Null,
                camera: "default",
                side: 16,
                frames: 40,
                num_envs: 8,
                scripted,
                driven: 0.0,
                decoy: 0.5,
                seed: 5,
            },
            None,
        )
    };
    for too_few in [0.0, 0.01] {
        // 0.01 of 8 envs rounds to no scripted env at all.
        let refused = collect_with(too_few).unwrap_err().to_string();
        assert!(refused.contains("give a scripted share"), "{refused}");
    }
    let refused = collect_with(0.75).unwrap_err().to_string();
    assert!(refused.contains("add up to at most 1"), "{refused}");
    if let Some(data) = rendered(collect_with(0.5)) {
        assert_eq!(data.len(), 40);
        assert!(data.captions.iter().all(|c| c.contains("the green ball")));
    }
}
