//! `proprio reward-model fit-progress`: a progress reward model (ReWiND)
//! fitted to a demonstrations file recorded with images, and `proprio
//! reward-model eval`: such a model judged on demonstrations and failed
//! episodes before any RL (value-order correlation, ranking).

use crate::{CliResult, Failure};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use proprio::serde_json::{Value, json};
use proprio_learn::EnvSource;
use proprio_learn::bc::{Demonstrations, FrameEpisodes, Player, demo_frames, rollout_frames};
use proprio_reward::Goal;
use proprio_reward::clip::{ClipModel, TextReading};
use proprio_reward::progress::{
    Episode, EpisodeKind, Presentation, ProgressConfig, ProgressData, ProgressModel, Ranking,
    episode_value_orders, fit, instruction_texts, mean_value_order, value_order_correlation,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Args)]
pub struct FitProgressArgs {
    /// Demonstrations recorded with images (`proprio demos --obs rgb+state --camera C`).
    #[arg(long)]
    demos: PathBuf,
    /// The CLIP whose frozen embeddings the model reads (`fit-clip` on the
    /// same env and camera); it is copied into the model's directory.
    #[arg(long)]
    clip: PathBuf,
    /// New directory for the model (never overwritten).
    #[arg(long)]
    out: PathBuf,
    /// The task's instruction, for an env whose observations carry none.
    #[arg(long)]
    instruction: Option<String>,
    /// A TOML file whose `[goals]` table gives each instruction's success
    /// caption (a reward file's table): the model reads the caption in the
    /// instruction's place, here and as a reward, so an instruction it never
    /// saw demonstrated reads through words its CLIP grounded in scenes.
    #[arg(long)]
    goals: Option<PathBuf>,
    /// Random-action episodes of the same env stack; the failed ones are learned as no progress.
    #[arg(long, default_value_t = 64)]
    failures: usize,
    /// Decoys: episodes where the arm makes the scripted expert's moves of
    /// another episode (its goal elsewhere), then holds; the failed ones are
    /// learned as no progress, so that an arm posed as a demonstration's
    /// end, but away from the goal, does not read as progress.
    #[arg(long, default_value_t = 64)]
    decoys: usize,
    /// A run whose policy (trained on the env's state, e.g. on a first
    /// progress model's reward) plays `--policy-episodes` episodes in the
    /// demonstrations' env stack: its failed ones are learned as no
    /// progress from the frame where the longest demonstration had finished
    /// (before, they may be on a demonstration's way), so the states a
    /// learner stalls or drifts into read as what they are. Repeat it to
    /// keep every earlier round's failures.
    #[arg(long)]
    policy: Vec<PathBuf>,
    /// Episodes each `--policy` plays.
    #[arg(long, default_value_t = 64)]
    policy_episodes: usize,
    /// Adam steps.
    #[arg(long, default_value_t = ProgressConfig::default().steps)]
    steps: usize,
    /// Frames the model reads, the newest last.
    #[arg(long, default_value_t = ProgressConfig::default().window)]
    window: usize,
    /// Share of each batch that is demonstrations under another of the
    /// data's instructions, read as no progress (ties the reading to the
    /// instruction; 0 lets the model read progress from the frames alone).
    #[arg(long, default_value_t = ProgressConfig::default().mismatch)]
    mismatch: f64,
    /// Share of each batch that is a demonstration's frames in a random
    /// order, each read as its own progress (progress from what a frame
    /// shows; raises the VOC of frames shown shuffled).
    #[arg(long, default_value_t = ProgressConfig::default().scramble)]
    scramble: f64,
    /// Read the instruction word by word (the CLIP's token embeddings, as
    /// many as its longest instruction has) instead of as the text tower's
    /// one sentence embedding: the model composes the words itself, so an
    /// instruction recombining known words reads as what it says.
    #[arg(long)]
    words: bool,
    /// With `--words`: the words as one token, each word through weights
    /// every place shares plus weights of its own place, so a known word in
    /// a known place adds what it added before, in any combination.
    #[arg(long, requires = "words")]
    fuse_words: bool,
    /// The instruction weighs the frames' features (progress: the frames'
    /// read-out plus their dot product with the instruction's token),
    /// instead of a token the transformer reads; with `--fuse-words`, each
    /// word in its place adds its own term.
    #[arg(long)]
    weigh: bool,
    /// Each frame also carries its views' cosines with the instruction's
    /// sentence embedding (its caption's, with `--goals`): the CLIP's own
    /// reading of how well the frame matches the words.
    #[arg(long, conflicts_with = "words")]
    similarity: bool,
    /// Fit the time-shuffled control instead (demonstrations' frames shuffled
    /// in time, no failures): a model that can learn no order, for `eval`.
    #[arg(long)]
    control: bool,
    /// Seed of the failures, the weights and the windows.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Args)]
pub struct EvalProgressArgs {
    /// A directory `fit-progress` wrote.
    #[arg(long)]
    model: PathBuf,
    /// Demonstrations to judge it on (held-out seeds or instructions), recorded with images.
    #[arg(long)]
    demos: PathBuf,
    /// The task's instruction, for an env whose observations carry none (default: the model's).
    #[arg(long)]
    instruction: Option<String>,
    /// Random-action episodes; the failed ones are ranked against the demonstrations.
    #[arg(long, default_value_t = 64)]
    failures: usize,
    /// Episodes of the scripted expert under action noise; the failed ones are the near-misses.
    #[arg(long, default_value_t = 64)]
    near_misses: usize,
    /// Standard deviation of the near-misses' action noise (action units).
    #[arg(long, default_value_t = 0.5)]
    noise: f32,
    /// Decoys: the expert's moves of another episode replayed (its goal elsewhere), then held; the failed ones are ranked too.
    #[arg(long, default_value_t = 64)]
    decoys: usize,
    /// Seed of the failures and near-misses, and of the shuffled presentation.
    #[arg(long, default_value_t = 2)]
    seed: u64,
}

pub fn fit_progress(args: &FitProgressArgs) -> CliResult {
    if args.out.exists() {
        return Err(Failure(format!(
            "{} already exists; choose a new directory",
            args.out.display()
        )));
    }
    let mut cfg = ProgressConfig {
        steps: args.steps,
        window: args.window,
        mismatch: args.mismatch,
        scramble: args.scramble,
        seed: args.seed,
        ..ProgressConfig::default()
    };
    cfg.validate().map_err(Failure)?;
    if args.weigh && args.words && !args.fuse_words {
        return Err(Failure(
            "--weigh reads the instruction as one token: the sentence, or --words with --fuse-words".into(),
        ));
    }
    let goals = match &args.goals {
        Some(path) => Some(Goal::read_table(path).map_err(reward)?),
        None => None,
    };
    let start = Instant::now();
    let cpu = proprio_learn::ComputeDevice::Cpu.device().map_err(learn)?;
    let clip = ClipModel::load(&args.clip, &cpu).map_err(reward)?;
    let (demos, source) = read_demos(&args.demos)?;
    if goals.is_some() && demos.episodes.iter().any(|e| e.instruction.is_none()) {
        return Err(Failure(format!(
            "--goals gives a caption per instruction, but {}'s episodes carry no instruction: name the task's caption with --instruction",
            args.demos.display()
        )));
    }
    let failures = failed(&source, args.failures, Player::Random, args.seed)?;
    let decoys = failed(&source, args.decoys, Player::Decoy, args.seed)?;
    let mut drifts = FrameEpisodes {
        side: failures.side,
        views: failures.views,
        episodes: Vec::new(),
    };
    for run in &args.policy {
        let policy = proprio_learn::Policy::load(run).map_err(learn)?;
        let trained = policy.env();
        if trained.id != source.id || trained.config != source.config {
            return Err(Failure(format!(
                "{} was trained on {} with config {}; the demonstrations come from {} with {}",
                run.display(),
                trained.id,
                trained.config,
                source.id,
                source.config
            )));
        }
        let played = Player::Policy(Box::new(policy));
        let drifted = failed(&source, args.policy_episodes, played, args.seed)?;
        drifts.episodes.extend(drifted.episodes);
    }
    // A learner's failure reads as no progress only from where the longest
    // demonstration had finished: before, it may be on a demonstration's way.
    let finished = demos.episodes.iter().map(|e| e.steps).max().unwrap_or(0);
    let sets = [
        (&demos, EpisodeKind::Demo, 0),
        (&failures, EpisodeKind::Failure, 0),
        (&decoys, EpisodeKind::Failure, 0),
        (&drifts, EpisodeKind::Failure, finished),
    ];
    let reading = |texts: &[String]| match args.words {
        true => TextReading::Words(
            texts
                .iter()
                .map(|t| clip.tokenize(t).len())
                .max()
                .unwrap_or(1),
        ),
        false => TextReading::Sentence,
    };
    let (mut data, instructions, read) = embed(
        &clip,
        &sets,
        args.instruction.as_deref(),
        &[],
        goals.as_ref(),
        reading,
    )?;
    cfg.words = match read {
        TextReading::Words(n) => n,
        TextReading::Sentence => 0,
    };
    cfg.fuse_words = args.fuse_words;
    cfg.weigh = args.weigh;
    cfg.similarity = args.similarity;
    if args.control {
        data = data.time_shuffled_control(&mut proprio::episode_rng(args.seed, 3, 0));
    }
    let collected = start.elapsed().as_secs_f64();
    let bar = fit_bar(cfg.steps)?;
    let (net, report) = fit(&data, &cfg, |_, loss| {
        bar.inc(1);
        bar.set_message(format!("{loss:.4}"));
    })
    .map_err(reward)?;
    bar.finish_and_clear();
    let summary = json!({
        "env": source.id,
        "demos": args.demos,
        "control": args.control,
        "policy": args.policy,
        "policy_scored_from": finished,
        "episodes": {"demos": report.train_demos + report.holdout.len(), "failures": data.of_kind(EpisodeKind::Failure).len(), "decoys": decoys.episodes.len()},
        "instructions": instructions,
        "goals": args.goals,
        "steps": cfg.steps,
        "final_loss": report.final_loss,
        "holdout_demos": report.holdout.len(),
        "holdout_voc": report.holdout_voc,
        "holdout_voc_in_order": report.holdout_voc_in_order,
        "holdout_ranking": ranking(&report.ranking),
        "collect_seconds": collected,
        "seconds": start.elapsed().as_secs_f64(),
    });
    let model = ProgressModel {
        net,
        config: cfg,
        dim: data.dim,
        text_dim: data.text_dim(),
        instructions,
        goals,
    };
    model
        .save(&args.out, &args.clip, summary.clone())
        .map_err(reward)?;
    println!("{summary}");
    Ok(())
}

pub fn eval_progress(args: &EvalProgressArgs) -> CliResult {
    let start = Instant::now();
    let model = ProgressModel::load(&args.model).map_err(reward)?;
    let cpu = proprio_learn::ComputeDevice::Cpu.device().map_err(learn)?;
    let clip = model.load_clip(&args.model, &cpu).map_err(reward)?;
    let (demos, source) = read_demos(&args.demos)?;
    if demos.views != model.views(&clip) {
        return Err(Failure(format!(
            "the model reads {} camera views a frame; {} holds {}",
            model.views(&clip),
            args.demos.display(),
            demos.views
        )));
    }
    let failures = failed(&source, args.failures, Player::Random, args.seed)?;
    let noisy = failed(
        &source,
        args.near_misses,
        Player::NoisyExpert(args.noise),
        args.seed,
    )?;
    let decoys = failed(&source, args.decoys, Player::Decoy, args.seed)?;
    let instruction = args
        .instruction
        .as_deref()
        .or(model.instructions.first().map(String::as_str));
    let sets = [
        (&demos, EpisodeKind::Demo, 0),
        (&failures, EpisodeKind::Failure, 0),
        (&noisy, EpisodeKind::Failure, 0),
        (&decoys, EpisodeKind::Failure, 0),
    ];
    let reading = |_: &[String]| model.config.reading();
    let (data, instructions, _) = embed(
        &clip,
        &sets,
        instruction,
        &model.instructions,
        model.goals.as_ref(),
        reading,
    )?;
    let count =
        |set: usize| -> usize { sets[..set].iter().map(|(s, _, _)| s.episodes.len()).sum() };
    let demo_ids: Vec<usize> = (0..count(1)).collect();
    let failed: Vec<usize> = (count(1)..count(2)).collect();
    let near: Vec<usize> = (count(2)..count(3)).collect();
    let decoyed: Vec<usize> = (count(3)..count(4)).collect();
    let w = model.config.window;
    let net = &model.net;
    let fail = |e: proprio_reward::RewardError| Failure(e.to_string());
    let unseen: Vec<&String> = instructions
        .iter()
        .filter(|i| !model.instructions.contains(i))
        .collect();
    let shown = Presentation::Shuffled(args.seed);
    let vocs = episode_value_orders(net, &data, &demo_ids, w, shown).map_err(fail)?;
    // Each instruction's demonstrations on their own, where the figure hides a template.
    let mut by_instruction = proprio::serde_json::Map::new();
    for (k, text) in instructions.iter().enumerate() {
        let own: Vec<f64> = demo_ids
            .iter()
            .zip(&vocs)
            .filter(|(e, _)| data.episodes[**e].text == k)
            .map(|(_, &voc)| voc)
            .collect();
        if !own.is_empty() {
            by_instruction.insert(text.clone(), json!(mean_value_order(&own)));
        }
    }
    let summary = json!({
        "model": args.model,
        "demos": args.demos,
        "env": source.id,
        "episodes": demo_ids.len(),
        "instructions": instructions.len(),
        "unseen_instructions": unseen,
        "voc": mean_value_order(&vocs),
        "voc_in_order": value_order_correlation(net, &data, &demo_ids, w, Presentation::InOrder).map_err(fail)?,
        "voc_by_instruction": by_instruction,
        "vs_random": ranking(&Ranking::of(net, &data, &demo_ids, &failed, w).map_err(fail)?),
        "vs_near_misses": ranking(&Ranking::of(net, &data, &demo_ids, &near, w).map_err(fail)?),
        "vs_decoys": ranking(&Ranking::of(net, &data, &demo_ids, &decoyed, w).map_err(fail)?),
        "near_misses": near.len(),
        "decoys": decoyed.len(),
        "random_failures": failed.len(),
        "seconds": start.elapsed().as_secs_f64(),
    });
    println!("{summary}");
    Ok(())
}

/// A progress bar over a fit's `steps` Adam steps, its loss as the message.
pub(super) fn fit_bar(steps: usize) -> Result<ProgressBar, Failure> {
    let style = ProgressStyle::with_template("{bar:30} {pos}/{len} steps, loss {msg} ({elapsed})")
        .map_err(|e| Failure(e.to_string()))?;
    Ok(ProgressBar::new(steps as u64).with_style(style))
}

/// The failed ones of `episodes` episodes `player` plays in `source`'s env stack.
fn failed(
    source: &EnvSource,
    episodes: usize,
    player: Player,
    seed: u64,
) -> Result<FrameEpisodes, Failure> {
    let mut played = rollout_frames(source, episodes, player, seed).map_err(learn)?;
    played.episodes.retain(|e| !e.success);
    Ok(played)
}

/// A demonstrations file's episodes as frames, and the env stack that recorded them.
fn read_demos(path: &Path) -> Result<(FrameEpisodes, EnvSource), Failure> {
    let demos = Demonstrations::read(path).map_err(learn)?;
    let frames = demo_frames(&demos).map_err(learn)?;
    Ok((frames, demos.header.env))
}

/// The episodes of `sets` (each with its kind and unscored frames) embedded
/// by `clip`, each step's views side by side, under their own instructions
/// or `instruction` for an env without them; the instructions listed in
/// `known` come first, in that order, and are read (as their captions in
/// `goals`, where given) as `reading` says of them all.
fn embed(
    clip: &ClipModel,
    sets: &[(&FrameEpisodes, EpisodeKind, usize)],
    instruction: Option<&str>,
    known: &[String],
    goals: Option<&BTreeMap<String, String>>,
    reading: impl FnOnce(&[String]) -> TextReading,
) -> Result<(ProgressData, Vec<String>, TextReading), Failure> {
    let mut instructions: Vec<String> = known.to_vec();
    let mut episodes = Vec::new();
    for &(set, kind, unscored) in sets {
        for e in &set.episodes {
            let text = match (&e.instruction, instruction) {
                (Some(text), _) => text.clone(),
                (None, Some(text)) => text.to_string(),
                (None, None) => {
                    return Err(Failure(
                        "this env's observations carry no instruction; name the task with --instruction".into(),
                    ));
                }
            };
            let text = match instructions.iter().position(|t| *t == text) {
                Some(k) => k,
                None => {
                    instructions.push(text);
                    instructions.len() - 1
                }
            };
            let embedded = clip
                .embed_frames(&e.pixels, e.steps * set.views, set.side, set.side, 3)
                .map_err(reward)?;
            episodes.push(Episode {
                frames: embedded.values,
                text,
                kind,
                unscored,
            });
        }
    }
    let texts = instruction_texts(goals, &instructions).map_err(reward)?;
    let read = reading(&texts);
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let embedded = clip.read_texts(&texts, read).map_err(reward)?;
    let data = ProgressData {
        dim: clip.config().projection_dim * sets.first().map_or(1, |(s, _, _)| s.views),
        texts: (0..embedded.len())
            .map(|k| embedded.row(k).to_vec())
            .collect(),
        episodes,
    };
    data.validate().map_err(reward)?;
    Ok((data, instructions, read))
}

fn ranking(r: &Ranking) -> Value {
    json!({"success": r.success, "failure": r.failure, "ordered": r.ordered})
}

fn reward(e: proprio_reward::RewardError) -> Failure {
    Failure(e.to_string())
}

fn learn(e: proprio_learn::LearnError) -> Failure {
    Failure(e.to_string())
}
