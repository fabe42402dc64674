//! The reward wrapper on a real env with the tiny fixture CLIP: rewards are
//! the model's scores of the frames the env shows, mixed with the task's as
//! configured; the task's reward stays in the info; same-step autoreset keeps
//! the last observation. Skipped without any wgpu adapter, unless
//! `PROPRIO_REQUIRE_GPU` is set.

#[path = "support/adapter.rs"]
mod adapter;
use adapter::rendered;
use burn::prelude::Device;
use proprio::render::{
    FrameSource, Frames, ObsMode, ObsOptions, RenderConfig, RenderCounts, Renderer, inner_autoreset,
};
use proprio::serde_json::Value;
use proprio::wrappers::SameStepAutoreset;
use proprio::{AutoresetMode, Scene, VecEnv, VecOptions};
use proprio_reward::clip::{ClipModel, Embeddings};
use proprio_reward::progress::{
    Episode, EpisodeKind, ProgressConfig, ProgressData, ProgressModel, ProgressNet,
    running_progress,
};
use proprio_reward::{
    Demo, Goal, MODEL_RETURN, MODEL_REWARD, ModelReward, Pooling, RewardConfig, RewardKind,
    Shaping, TASK_REWARD, VlmRm, model_reward,
};
use proprio_text::ClipTokenizer;
use std::collections::BTreeMap;
use std::path::PathBuf;

fn tiny() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../assets/clip-tiny")
}

fn config(weight: f32, task_weight: f32) -> RewardConfig {
    RewardConfig {
        model: Some(tiny()),
        weight,
        task_weight,
        ..RewardConfig::new(RewardKind::VlmRm {
            goal: Goal::Text("a pole balanced upright".into()),
            baseline: Some("a pole".into()),
            alpha: 0.5,
        })
    }
}

fn cartpoles(n: usize, reward: &RewardConfig) -> Option<ModelReward<Box<dyn VecEnv>>> {
    let options = VecOptions {
        threads: Some(1),
        ..VecOptions::default()
    };
    let inner = proprio::make_vec("classic/cartpole-v1", n, &Value::Null, options).unwrap();
    rendered(model_reward(
        inner,
        reward,
        &FrameSource::new(),
        &Device::flex(),
    ))
}

/// Cart-poles under `reward` in same-step mode: the reward model over envs
/// with autoreset disabled, and the one same-step wrapper on top.
fn same_step_cartpoles(
    n: usize,
    reward: &RewardConfig,
) -> Option<SameStepAutoreset<ModelReward<Box<dyn VecEnv>>>> {
    let options = VecOptions {
        autoreset: inner_autoreset(AutoresetMode::SameStep),
        threads: Some(1),
        ..VecOptions::default()
    };
    let inner = proprio::make_vec("classic/cartpole-v1", n, &Value::Null, options).unwrap();
    let wrapper = rendered(model_reward(
        inner,
        reward,
        &FrameSource::new(),
        &Device::flex(),
    ))?;
    Some(SameStepAutoreset::new(wrapper).unwrap())
}

/// What each env of `venv` shows now through `camera`, embedded by the tiny CLIP (one row per env).
fn embed_view(venv: &dyn VecEnv, clip: &ClipModel, camera: &str) -> Embeddings {
    let side = clip.config().vision_config.image_size as u32;
    let mut renderer = Renderer::new(RenderConfig {
        width: side,
        height: side,
        floor: true,
    })
    .unwrap();
    let mut scenes = vec![Scene::default(); venv.num_envs()];
    for (i, scene) in scenes.iter_mut().enumerate() {
        venv.scene(i, scene).unwrap();
    }
    let mut frames = Frames::default();
    renderer
        .render(&scenes, camera, false, &mut frames)
        .unwrap();
    clip.embed_frames(&frames.rgb, scenes.len(), side as usize, side as usize, 3)
        .unwrap()
}

/// The VLM-RM scores of what each env of `venv` shows now through `cameras`
/// (the unit mean of the views' embeddings), computed without the wrapper.
fn expected_scores(venv: &dyn VecEnv, reward: &RewardConfig, cameras: &[&str]) -> Vec<f32> {
    let clip = ClipModel::load(&tiny(), &Device::flex()).unwrap();
    let dim = clip.config().projection_dim;
    let mut mean = vec![0.0f32; venv.num_envs() * dim];
    for camera in cameras {
        let view = embed_view(venv, &clip, camera);
        mean.iter_mut().zip(&view.values).for_each(|(m, v)| *m += v);
    }
    let RewardKind::VlmRm {
        goal: Goal::Text(goal),
        baseline: Some(baseline),
        alpha,
    } = &reward.kind
    else {
        panic!("a VLM-RM config with a baseline: {reward:?}")
    };
    let texts = clip.embed_texts(&[goal, baseline]).unwrap();
    let vlm = VlmRm::new(texts.row(0), texts.row(1), *alpha).unwrap();
    mean.chunks(dim)
        .map(|row| {
            let norm = row.iter().map(|x| x * x).sum::<f32>().sqrt();
            let unit: Vec<f32> = row.iter().map(|x| x / norm).collect();
            vlm.score(&unit)
        })
        .collect()
}

/// The cosine similarity of two vectors.
fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let dot = |x: &[f32], y: &[f32]| x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>();
    dot(a, b) / (dot(a, a) * dot(b, b)).sqrt()
}

#[test]
fn rewards_are_the_models_scores_mixed_with_the_tasks() {
    let reward = config(2.0, 0.5);
    let Some(mut venv) = cartpoles(3, &reward) else {
        return;
    };
    venv.reset(Some(7), None).unwrap();
    venv.step(&[0.0, 1.0, 1.0]).unwrap();
    let expected = expected_scores(&venv, &reward, &["default"]);
    let b = venv.batch();
    for (i, score) in expected.iter().enumerate() {
        let info = &b.infos[i];
        assert_eq!(info.get(TASK_REWARD), Some(1.0), "cartpole pays 1 per step");
        let model = info.get(MODEL_REWARD).unwrap() as f32;
        assert!((model - score).abs() < 1e-5, "env {i}: {model} vs {score}");
        assert!((b.reward[i] - (2.0 * score + 0.5)).abs() < 1e-5);
    }
    assert_ne!(
        expected[0], expected[1],
        "different states score differently"
    );
    assert!(venv.cost().frames == 3 && venv.cost().batches == 1);
}

#[test]
fn several_cameras_score_the_unit_mean_of_their_views() {
    let reward = RewardConfig {
        camera: "default, top".into(),
        offset: -1.0,
        ..config(1.0, 0.0)
    };
    let Some(mut venv) = cartpoles(2, &reward) else {
        return;
    };
    venv.reset(Some(5), None).unwrap();
    venv.step(&[1.0, 0.0]).unwrap();
    let expected = expected_scores(&venv, &reward, &["default", "top"]);
    let alone = expected_scores(&venv, &reward, &["default"]);
    let b = venv.batch();
    for (i, score) in expected.iter().enumerate() {
        let model = b.infos[i].get(MODEL_REWARD).unwrap() as f32;
        assert!((model - score).abs() < 1e-5, "env {i}: {model} vs {score}");
        assert!(
            (b.reward[i] - (score - 1.0)).abs() < 1e-5,
            "the offset shifts the reward"
        );
        assert!(
            (score - alone[i]).abs() > 1e-4,
            "the second view changes the score"
        );
    }
    assert_eq!(venv.cost().frames, 4, "two views of two envs");
}

#[test]
fn same_step_autoreset_keeps_the_last_frame_and_reports_the_model_return() {
    let reward = config(1.0, 0.0);
    let Some(mut venv) = same_step_cartpoles(2, &reward) else {
        return;
    };
    venv.reset(Some(3), None).unwrap();
    let mut model_sum = [0.0f64; 2];
    // Pushing right forever topples the pole within a few dozen steps.
    for _ in 0..200 {
        venv.step(&[1.0, 1.0]).unwrap();
        let b = venv.batch();
        for (i, sum) in model_sum.iter_mut().enumerate() {
            if b.has_final[i] {
                let info = &b.final_infos[i];
                *sum += info.get(MODEL_REWARD).unwrap();
                let reported = info
                    .get(MODEL_RETURN)
                    .expect("model.return on the last step");
                assert!((reported - *sum).abs() < 1e-4, "{reported} vs {sum}");
                let last = b.final_obs(i).unwrap();
                assert!(
                    last[2].abs() > 0.2,
                    "the final observation is the fallen pole: {last:?}"
                );
                assert!(
                    b.obs(i)[2].abs() < 0.06,
                    "the new episode starts near upright"
                );
                assert_eq!(b.reward[i], info.get(MODEL_REWARD).unwrap() as f32);
                return;
            }
            *sum += b.infos[i].get(MODEL_REWARD).unwrap();
        }
    }
    panic!("no episode ended in 200 steps");
}

#[test]
fn last_frame_roboclip_renders_only_the_frames_episodes_end_on() {
    let goal = "a pole balanced upright";
    let reward = RewardConfig {
        model: Some(tiny()),
        ..RewardConfig::new(RewardKind::Roboclip {
            demo: Demo::Text(Goal::Text(goal.into())),
            pooling: Pooling::Last,
        })
    };
    let Some(mut venv) = cartpoles(2, &reward) else {
        return;
    };
    let clip = ClipModel::load(&tiny(), &Device::flex()).unwrap();
    let text = clip.embed_texts(&[goal]).unwrap();
    venv.reset(Some(3), None).unwrap();
    let (mut steps, mut ended) = (0, 0);
    // Env 0 is pushed right and topples within a few dozen steps; env 1 is
    // rocked and outlives it, so most steps end no episode.
    for t in 0..200 {
        venv.step(&[1.0, (t % 2) as f32]).unwrap();
        let shown = embed_view(&venv, &clip, "default");
        let b = venv.batch();
        for i in 0..2 {
            // Next-step autoreset: the step after an end only starts the next episode.
            let Some(model) = b.infos[i].get(MODEL_REWARD) else {
                continue;
            };
            steps += 1;
            if b.done(i) {
                ended += 1;
                let expected = cosine(shown.row(i), text.row(0));
                assert!(
                    (model as f32 - expected).abs() < 1e-5,
                    "env {i}: {model} vs the last frame's similarity {expected}"
                );
            } else {
                assert_eq!(model, 0.0, "RoboCLIP pays only an episode's end");
            }
        }
        if ended >= 2 {
            break;
        }
    }
    assert!(
        ended >= 2 && steps > 10 * ended,
        "{ended} ends in {steps} steps"
    );
    assert_eq!(
        venv.cost().frames,
        ended,
        "only the frames episodes end on are rendered and embedded"
    );
}

#[test]
fn a_missing_model_is_a_clear_error() {
    let mut reward = config(1.0, 0.0);
    reward.model = Some(PathBuf::from("/nonexistent/clip"));
    let options = VecOptions::default();
    let inner = proprio::make_vec("classic/cartpole-v1", 1, &Value::Null, options).unwrap();
    let err = model_reward(inner, &reward, &FrameSource::new(), &Device::flex())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.contains("/nonexistent/clip") && err.contains("not a model directory"),
        "{err}"
    );
}

/// Pixel observations and a VLM-RM reward share one frame source: each env's
/// scene is collected once per state, and a view the two have in common is
/// rendered once per step (with `reward_camera` apart, it is rendered once
/// for each). Envs that reset mid-run are rendered again, once, for their
/// new observation.
fn count_renders(reward_camera: &str) -> Option<(RenderCounts, u64, u64)> {
    let clip = ClipModel::load(&tiny(), &Device::flex()).unwrap();
    let side = clip.config().vision_config.image_size as u32;
    let reward = RewardConfig {
        camera: reward_camera.into(),
        ..config(1.0, 0.0)
    };
    let obs = ObsOptions {
        mode: ObsMode::Rgb,
        image_size: side,
        camera: "default".into(),
        frame_stack: 1,
    };
    let n = 4;
    let options = VecOptions {
        autoreset: AutoresetMode::Disabled,
        threads: Some(1),
        ..VecOptions::default()
    };
    let source = FrameSource::new();
    let inner = match proprio::make_vec_framed(
        "classic/cartpole-v1",
        n,
        &Value::Null,
        options,
        &obs,
        &source,
    ) {
        Err(e)
            if e.to_string().contains("no GPU adapter")
                && std::env::var_os("PROPRIO_REQUIRE_GPU").is_none() =>
        {
            eprintln!("skipped: {e}");
            return None;
        }
        other => other.unwrap(),
    };
    let wrapper = rendered(model_reward(inner, &reward, &source, &Device::flex()))?;
    let mut venv = SameStepAutoreset::new(wrapper).unwrap();
    venv.reset(Some(1), None).unwrap();
    let (steps, mut resets, mut reset_steps) = (60u64, 0u64, 0u64);
    for _ in 0..steps {
        venv.step(&[1.0; 4]).unwrap();
        let ended = venv.batch().has_final.iter().filter(|f| **f).count() as u64;
        resets += ended;
        reset_steps += u64::from(ended > 0);
    }
    assert!(resets > 0, "pushing right ends episodes within 60 steps");
    let counts = source.counts();
    assert_eq!(
        counts.scenes,
        n as u64 * (1 + steps) + resets,
        "one scene per env and state, whoever asks"
    );
    Some((counts, resets, reset_steps))
}

#[test]
fn pixels_and_a_reward_model_render_each_view_once_per_step() {
    let Some((shared, resets, reset_steps)) = count_renders("default") else {
        return;
    };
    // The first reset, every step, and every step on which envs reset.
    assert_eq!(shared.renders, 1 + 60 + reset_steps, "{shared:?}");
    assert_eq!(shared.images, 4 * 61 + resets, "{shared:?}");
    let Some((apart, ..)) = count_renders("top") else {
        return;
    };
    assert_eq!(
        apart.renders,
        shared.renders + 60,
        "a second view costs one render per step: {apart:?}"
    );
}

/// Every instruction `manipulation/instruct-v0` words over its three cubes.
fn instruct_instructions() -> Vec<String> {
    let colours = ["red", "green", "blue"];
    let mut all = Vec::new();
    for (i, cube) in colours.iter().enumerate() {
        for side in ["front", "back", "left", "right"] {
            all.push(format!("push the {cube} cube to the {side}"));
        }
        all.push(format!("pick up the {cube} cube"));
        for (j, on) in colours.iter().enumerate() {
            if i != j {
                all.push(format!("put the {cube} cube on the {on} cube"));
            }
        }
    }
    all
}

/// Envs paid by a model reward.
type Paid = ModelReward<Box<dyn VecEnv>>;

/// Four instruct-v0 envs (every instruction in the draw) paid by `reward`,
/// stepped once from seed 2, with each env's instruction read back from its
/// observation outside the wrapper; `None` where nothing renders.
fn instruct_step(reward: &RewardConfig) -> Option<(Paid, Vec<String>)> {
    let options = VecOptions {
        threads: Some(1),
        ..VecOptions::default()
    };
    let config = proprio::serde_json::json!({"split": "all"});
    let inner = proprio::make_vec("manipulation/instruct-v0", 4, &config, options).unwrap();
    let mut venv = rendered(model_reward(
        inner,
        reward,
        &FrameSource::new(),
        &Device::flex(),
    ))?;
    venv.reset(Some(2), None).unwrap();
    let actions = vec![0.0; 4 * venv.spec().action_space.flat_dim()];
    venv.step(&actions).unwrap();
    let columns = venv.spec().observation_space.token_parts()[0].clone();
    let tokenizer = ClipTokenizer::openai(columns.len());
    let batch = venv.batch();
    let instructions: Vec<String> = (0..4)
        .map(|i| {
            let ids: Vec<u32> = batch.obs(i)[columns.clone()]
                .iter()
                .map(|&t| t as u32)
                .collect();
            tokenizer.decode(&ids).unwrap()
        })
        .collect();
    assert!(
        instructions[1..].iter().any(|i| *i != instructions[0]),
        "the seed draws different instructions: {instructions:?}"
    );
    Some((venv, instructions))
}

/// A caption per instruction, each naming its own instruction's words.
fn photo_goals() -> BTreeMap<String, String> {
    instruct_instructions()
        .into_iter()
        .map(|i| (i.clone(), format!("a photo: {i}")))
        .collect()
}

#[test]
fn goals_per_instruction_score_each_env_against_its_own_episodes_caption() {
    let goals = photo_goals();
    let reward = RewardConfig {
        model: Some(tiny()),
        camera: "front".into(),
        ..RewardConfig::new(RewardKind::VlmRm {
            goal: Goal::PerInstruction(goals.clone()),
            baseline: Some("a table with cubes".into()),
            alpha: 0.5,
        })
    };
    let Some((venv, instructions)) = instruct_step(&reward) else {
        return;
    };
    let batch = venv.batch();
    let clip = ClipModel::load(&tiny(), &Device::flex()).unwrap();
    let frames = embed_view(&venv, &clip, "front");
    let baseline = clip.embed_texts(&["a table with cubes"]).unwrap();
    for (i, instruction) in instructions.iter().enumerate() {
        let caption = clip.embed_texts(&[&goals[instruction]]).unwrap();
        let expected = VlmRm::new(caption.row(0), baseline.row(0), 0.5)
            .unwrap()
            .score(frames.row(i));
        let paid = batch.infos[i].get(MODEL_REWARD).unwrap() as f32;
        assert!(
            (paid - expected).abs() < 1e-5,
            "env {i} ({instruction}): {paid} vs {expected}"
        );
        let other = clip
            .embed_texts(&["a photo: pick up the red cube"])
            .unwrap();
        let wrong = VlmRm::new(other.row(0), baseline.row(0), 0.5)
            .unwrap()
            .score(frames.row(i));
        if instruction != "pick up the red cube" {
            assert!(
                (paid - wrong).abs() > 1e-6,
                "env {i} is not scored against another's caption"
            );
        }
    }
    // An env whose observations carry no instruction has nothing to look up.
    let error = model_reward(
        proprio::make_vec(
            "classic/cartpole-v1",
            1,
            &Value::Null,
            VecOptions::default(),
        )
        .unwrap(),
        &reward,
        &FrameSource::new(),
        &Device::flex(),
    )
    .err()
    .unwrap();
    assert!(
        error.to_string().contains("carry no instruction"),
        "{error}"
    );
}

#[test]
fn a_progress_model_with_goals_reads_each_env_under_its_own_instructions_caption() {
    let device = Device::flex();
    let clip = ClipModel::load(&tiny(), &device).unwrap();
    let dim = clip.config().projection_dim;
    let cfg = ProgressConfig {
        window: 3,
        width: 8,
        heads: 2,
        ..ProgressConfig::default()
    };
    let goals = photo_goals();
    let model = ProgressModel {
        net: ProgressNet::new(&cfg, dim, dim, &device),
        config: cfg,
        dim,
        text_dim: dim,
        instructions: vec!["pick up the red cube".into()],
        goals: Some(goals.clone()),
    };
    let dir = std::env::temp_dir().join(format!("proprio-progress-goals-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    model.save(&dir, &tiny(), Value::Null).unwrap();
    let reward = RewardConfig {
        model: Some(dir.clone()),
        camera: "front".into(),
        ..RewardConfig::new(RewardKind::Progress {
            instruction: None,
            shaping: Shaping::Progress,
            ensemble: Vec::new(),
        })
    };
    let stepped = instruct_step(&reward);
    std::fs::remove_dir_all(&dir).unwrap();
    let Some((venv, instructions)) = stepped else {
        return;
    };
    let frames = embed_view(&venv, &clip, "front");
    for (i, instruction) in instructions.iter().enumerate() {
        // The env's first frame read under its caption, and under its instruction's words.
        let texts = clip
            .embed_texts(&[&goals[instruction], instruction])
            .unwrap();
        let data = ProgressData {
            dim,
            texts: vec![texts.row(0).to_vec(), texts.row(1).to_vec()],
            episodes: (0..2)
                .map(|text| Episode {
                    frames: frames.row(i).to_vec(),
                    text,
                    kind: EpisodeKind::Demo,
                    unscored: 0,
                })
                .collect(),
        };
        let read = |episode| running_progress(&model.net, &data, episode, 3).unwrap()[0];
        let paid = venv.batch().infos[i].get(MODEL_REWARD).unwrap() as f32;
        assert!(
            (paid - read(0)).abs() < 1e-5,
            "env {i} ({instruction}): {paid} vs {}",
            read(0)
        );
        assert!(
            (paid - read(1)).abs() > 1e-6,
            "env {i} is read under its caption, not its instruction's words"
        );
    }
}
