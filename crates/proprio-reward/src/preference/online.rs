//! Preference learning during training (PEBBLE's schedule): cut each env's
//! stream of frame embeddings into segments, and every `query_every` scored
//! frames ask the labeller about `queries` random pairs of recent segments,
//! refit `r_ψ` on every label so far, and pay `r_ψ` of each new frame. Until
//! the first fit the reward is 0. On an env whose episodes each draw an
//! instruction, a head with goals reads each frame with its instruction's
//! caption beside it, so one `r_ψ` pays each env for its own goal.

use super::human::{Clip, HumanDesk};
use super::{Pair, PreferenceConfig, PreferenceModel, clip_label, oracle_label};
use crate::wrapper::{RewardHead, StepFrames};
use crate::{Result, RewardError};
use proprio::rand::RngExt;
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

/// Who says which of two segments is better.
#[derive(Debug)]
pub enum Labeller {
    /// The task's true return over the segment (an ablation: perfect labels).
    Oracle,
    /// CLIP: whose last frame is closer to the goal text (unit embedding).
    Clip(Vec<f32>),
    /// CLIP, with a caption per instruction: whose last frame is closer to
    /// its own instruction's caption, which the segment's features carry
    /// beside each frame (so `r_ψ` reads it too).
    ClipPerInstruction(BTreeMap<String, String>),
    /// A person, shown the segments' frames (see [`super::human`]).
    Human(HumanDesk),
}

/// The PEBBLE schedule's sizes.
#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    /// Pairs labelled per round.
    pub queries: usize,
    /// Frames scored between rounds.
    pub query_every: u64,
    /// Recent segments kept to draw pairs from.
    pub pool: usize,
}

impl Default for Schedule {
    fn default() -> Self {
        Self {
            queries: 100,
            query_every: 5_000,
            pool: 1_000,
        }
    }
}

/// A segment: its frames' features, its true return, and (for a person to
/// watch) its rendered frames.
#[derive(Default)]
struct Segment {
    features: Vec<f32>,
    task_return: f64,
    pixels: Vec<u8>,
}

impl Segment {
    /// An empty segment with room for `features` values.
    fn with_capacity(features: usize) -> Self {
        Self {
            features: Vec::with_capacity(features),
            ..Self::default()
        }
    }

    /// The last frame's features.
    fn last(&self, dim: usize) -> &[f32] {
        &self.features[self.features.len() - dim..]
    }
}

/// The preference reward head.
pub struct PreferenceHead {
    model: PreferenceModel,
    labeller: Labeller,
    schedule: Schedule,
    /// Features per frame: the frame's embedding, then its caption's with goals.
    dim: usize,
    /// Each scored env's features this step (reused).
    scratch: Vec<f32>,
    segment: usize,
    /// Per env: its unfinished segment.
    open: Vec<Segment>,
    pool: VecDeque<Segment>,
    labels: Vec<Pair>,
    scored: u64,
    fitted: bool,
    /// Evaluation: pay what `r_ψ` learned, collect and ask nothing.
    frozen: bool,
    rng: proprio::EnvRng,
}

/// The file a preference head's `r_ψ` is saved to in a checkpoint folder.
pub const REWARD_NET_FILE: &str = "reward_net.bpk";

impl PreferenceHead {
    /// A head for `num_envs` envs whose frames embed to `dim` values; with a
    /// caption per instruction, `r_ψ` reads each frame beside its instruction's.
    pub fn new(
        dim: usize,
        num_envs: usize,
        config: PreferenceConfig,
        schedule: Schedule,
        labeller: Labeller,
    ) -> Result<Self> {
        if schedule.queries == 0 || schedule.query_every == 0 || schedule.pool < 2 {
            return Err(RewardError::Input(
                "preference schedule: queries and query_every must be positive, pool at least 2"
                    .into(),
            ));
        }
        if let Labeller::Clip(goal) = &labeller
            && goal.len() != dim
        {
            return Err(RewardError::Input(format!(
                "the goal embeds to {} values, frames to {dim}",
                goal.len()
            )));
        }
        let dim = match labeller {
            Labeller::ClipPerInstruction(_) => 2 * dim,
            _ => dim,
        };
        let segment = config.segment;
        let rng = proprio::episode_rng(config.seed, 1, 1);
        Ok(Self {
            model: PreferenceModel::new(dim, config)?,
            labeller,
            schedule,
            dim,
            scratch: Vec::with_capacity(num_envs * dim),
            segment,
            open: (0..num_envs)
                .map(|_| Segment::with_capacity(segment * dim))
                .collect(),
            pool: VecDeque::new(),
            labels: Vec::new(),
            scored: 0,
            fitted: false,
            frozen: false,
            rng,
        })
    }

    /// `r_ψ` of each frame's features into `out`; 0 until the first fit.
    fn pay(&self, features: &[f32], out: &mut [f32]) -> Result<()> {
        if self.fitted {
            out.copy_from_slice(&self.model.rewards(features)?);
        } else {
            out.fill(0.0);
        }
        Ok(())
    }

    /// Pairs labelled so far.
    pub fn labels(&self) -> usize {
        self.labels.len()
    }

    /// One round: label `queries` random pairs of pooled segments, refit.
    /// `side` is the side of the rendered frames a person is shown.
    fn query(&mut self, side: usize) -> Result<()> {
        let n = self.pool.len();
        let picks: Vec<(usize, usize)> = (0..self.schedule.queries)
            .map(|_| {
                let a = self.rng.random_range(0..n);
                (a, (a + self.rng.random_range(1..n)) % n)
            })
            .collect();
        let labels = match &mut self.labeller {
            Labeller::Oracle => picks
                .iter()
                .map(|&(a, b)| oracle_label(self.pool[a].task_return, self.pool[b].task_return))
                .collect(),
            Labeller::Clip(goal) => picks
                .iter()
                .map(|&(a, b)| {
                    clip_label(
                        goal,
                        self.pool[a].last(self.dim),
                        self.pool[b].last(self.dim),
                    )
                })
                .collect(),
            Labeller::ClipPerInstruction(_) => picks
                .iter()
                .map(|&(a, b)| {
                    let score = |k: usize| {
                        let (frame, caption) = self.pool[k].last(self.dim).split_at(self.dim / 2);
                        frame.iter().zip(caption).map(|(f, c)| f * c).sum::<f32>()
                    };
                    oracle_label(f64::from(score(a)), f64::from(score(b)))
                })
                .collect(),
            Labeller::Human(desk) => {
                let views = self.pool[0].pixels.len() / (self.segment * side * side * 3);
                let pool = &self.pool;
                let clip = |k: usize| Clip {
                    pixels: &pool[k].pixels,
                    side,
                    views,
                };
                let pairs: Vec<_> = picks.iter().map(|&(a, b)| (clip(a), clip(b))).collect();
                desk.ask(&pairs)?
            }
        };
        for (&(a, b), label) in picks.iter().zip(labels) {
            self.labels.push(Pair {
                first: self.pool[a].features.clone(),
                second: self.pool[b].features.clone(),
                label,
            });
        }
        self.model.fit(&self.labels)?;
        self.fitted = true;
        Ok(())
    }

    /// Collects this step's `features` (a row per env) into segments, runs
    /// a labelling round when one is due, and pays `r_ψ` of each row.
    fn score(&mut self, step: &StepFrames, features: &[f32], out: &mut [f32]) -> Result<()> {
        if self.frozen {
            return self.pay(features, out);
        }
        let watched = matches!(self.labeller, Labeller::Human(_));
        let frame = step.side * step.side * 3;
        let count = step.envs.len();
        for (k, &i) in step.envs.iter().enumerate() {
            let open = &mut self.open[i];
            open.features
                .extend_from_slice(&features[k * self.dim..(k + 1) * self.dim]);
            open.task_return += f64::from(step.task[k]);
            if watched && frame > 0 {
                for view in step.pixels.chunks_exact(count * frame) {
                    open.pixels
                        .extend_from_slice(&view[k * frame..(k + 1) * frame]);
                }
            }
            if open.features.len() == self.segment * self.dim {
                if self.pool.len() == self.schedule.pool {
                    self.pool.pop_front();
                }
                let fresh = Segment::with_capacity(self.segment * self.dim);
                self.pool.push_back(std::mem::replace(open, fresh));
            }
            if step.done[k] {
                self.restart(i);
            }
        }
        let before = self.scored / self.schedule.query_every;
        self.scored += step.envs.len() as u64;
        if self.scored / self.schedule.query_every > before && self.pool.len() >= 2 {
            self.query(step.side)?;
        }
        self.pay(features, out)
    }
}

impl RewardHead for PreferenceHead {
    fn rewards(&mut self, step: &StepFrames, out: &mut [f32]) -> Result<()> {
        let mut features = std::mem::take(&mut self.scratch);
        features.clear();
        if self.instruction_goals().is_some() {
            let (captions, rows) = step.captions()?;
            for (k, &row) in rows.iter().enumerate() {
                features.extend_from_slice(step.embeddings.row(k));
                features.extend_from_slice(captions.row(row));
            }
        } else {
            features.extend_from_slice(&step.embeddings.values);
        }
        let paid = self.score(step, &features, out);
        self.scratch = features;
        paid
    }

    fn instruction_goals(&self) -> Option<&BTreeMap<String, String>> {
        match &self.labeller {
            Labeller::ClipPerInstruction(goals) => Some(goals),
            _ => None,
        }
    }

    fn restart(&mut self, env: usize) {
        let open = &mut self.open[env];
        open.features.clear();
        open.pixels.clear();
        open.task_return = 0.0;
    }

    /// Saves `r_ψ` once it has been fitted. The labelled pairs and the
    /// segment pool are not saved: a resumed run pays the saved `r_ψ` and
    /// labels afresh from there.
    fn save(&self, dir: &Path) -> Result<()> {
        if self.fitted {
            self.model.save(&dir.join(REWARD_NET_FILE))?;
        }
        Ok(())
    }

    fn load(&mut self, dir: &Path, frozen: bool) -> Result<()> {
        let path = dir.join(REWARD_NET_FILE);
        if path.exists() {
            self.model.load(&path)?;
            self.fitted = true;
        }
        self.frozen = frozen;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clip::Embeddings;

    /// A step of `envs` showing `frames`, with no pixels.
    fn step<'a>(
        frames: &'a Embeddings,
        envs: &'a [usize],
        done: &'a [bool],
        task: &'a [f32],
        instructions: Option<(&'a Embeddings, &'a [usize])>,
    ) -> StepFrames<'a> {
        StepFrames {
            embeddings: frames,
            views: frames,
            envs,
            done,
            task,
            pixels: &[],
            side: 0,
            instructions,
        }
    }

    /// Segments of 4 frames, `queries` pairs labelled every 400 frames, a fast fit.
    fn quick_fit(queries: usize) -> (PreferenceConfig, Schedule) {
        let config = PreferenceConfig {
            segment: 4,
            learning_rate: 3e-3,
            epochs: 20,
            ..PreferenceConfig::default()
        };
        let schedule = Schedule {
            queries,
            query_every: 400,
            pool: 200,
        };
        (config, schedule)
    }

    /// Frames whose first feature is the task reward: the oracle's labels teach
    /// `r_ψ` to pay for it, and it does once the first round has been fitted.
    #[test]
    fn the_head_learns_the_oracles_preference_online() {
        let (config, schedule) = quick_fit(200);
        let mut head =
            PreferenceHead::new(2, 2, config.clone(), schedule.clone(), Labeller::Oracle).unwrap();
        let mut rng = proprio::episode_rng(3, 0, 0);
        let mut out = [0.0; 2];
        for t in 0..200 {
            let task: Vec<f32> = (0..2).map(|_| rng.random_range(-1.0f32..1.0)).collect();
            let values = vec![
                task[0],
                rng.random_range(-1.0..1.0),
                task[1],
                rng.random_range(-1.0..1.0),
            ];
            let embeddings = Embeddings { dim: 2, values };
            let done = [t % 50 == 49; 2];
            let step = step(&embeddings, &[0, 1], &done, &task, None);
            head.rewards(&step, &mut out).unwrap();
            if t < 199 && head.labels() == 0 {
                assert_eq!(out, [0.0, 0.0], "no reward before the first fit");
            }
        }
        assert_eq!(head.labels(), 200);
        let embeddings = Embeddings {
            dim: 2,
            values: vec![0.9, 0.0, -0.9, 0.0],
        };
        let step = step(&embeddings, &[0, 1], &[false; 2], &[0.0; 2], None);
        head.rewards(&step, &mut out).unwrap();
        assert!(
            out[0] > out[1] + 0.5,
            "r_ψ pays for the task's reward: {out:?}"
        );

        // Saved with a checkpoint and loaded frozen (evaluation), a fresh head
        // pays the same and labels nothing more.
        let dir = std::env::temp_dir().join(format!("proprio-pref-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        head.save(&dir).unwrap();
        let mut frozen = PreferenceHead::new(2, 2, config, schedule, Labeller::Oracle).unwrap();
        frozen.load(&dir, true).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let mut again = [0.0; 2];
        for _ in 0..1000 {
            frozen.rewards(&step, &mut again).unwrap();
        }
        assert_eq!(again, out);
        assert_eq!(frozen.labels(), 0);
    }

    /// Two instructions whose captions point different ways: the CLIP
    /// labeller prefers the segment whose last frame is nearer its own
    /// caption, and `r_ψ`, reading the caption beside each frame, learns to
    /// pay a frame for matching its own episode's goal — which no reward of
    /// the frame alone can do for both captions at once.
    #[test]
    fn with_goals_r_psi_pays_each_frame_for_its_own_instructions_caption() {
        let (config, schedule) = quick_fit(300);
        let labeller = Labeller::ClipPerInstruction(BTreeMap::new());
        let mut head = PreferenceHead::new(2, 2, config, schedule, labeller).unwrap();
        let captions = Embeddings {
            dim: 2,
            values: vec![1.0, 0.0, 0.0, 1.0],
        };
        let mut rng = proprio::episode_rng(5, 0, 0);
        let mut out = [0.0; 2];
        for t in 0..400 {
            let values: Vec<f32> = (0..2)
                .flat_map(|_| {
                    let angle = rng.random_range(0.0f32..std::f32::consts::FRAC_PI_2);
                    [angle.cos(), angle.sin()]
                })
                .collect();
            let embeddings = Embeddings { dim: 2, values };
            // Each env switches instruction every episode of 20 steps.
            let episode = t / 20;
            let (rows, done) = ([episode % 2, (episode + 1) % 2], [t % 20 == 19; 2]);
            let instructions = Some((&captions, &rows[..]));
            let step = step(&embeddings, &[0, 1], &done, &[0.0; 2], instructions);
            head.rewards(&step, &mut out).unwrap();
        }
        assert!(head.labels() >= 300);
        let frames = Embeddings {
            dim: 2,
            values: vec![1.0, 0.0, 0.0, 1.0],
        };
        let mut paid = |rows: [usize; 2]| {
            let step = step(
                &frames,
                &[0, 1],
                &[false; 2],
                &[0.0; 2],
                Some((&captions, &rows)),
            );
            let mut out = [0.0; 2];
            head.rewards(&step, &mut out).unwrap();
            out
        };
        let [along_first, across_first] = paid([0, 0]);
        let [across_second, along_second] = paid([1, 1]);
        assert!(
            along_first > across_first + 0.5,
            "{along_first} vs {across_first}"
        );
        assert!(
            along_second > across_second + 0.5,
            "{along_second} vs {across_second}"
        );
    }

    /// A person is shown each segment's own frames, in order: env k's frame at
    /// step t is coloured (60t, 120k, 200v) in view v.
    #[test]
    fn a_person_watches_the_segments_frames() {
        let dir = std::env::temp_dir().join(format!("proprio-pref-human-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let config = PreferenceConfig {
            segment: 3,
            ..PreferenceConfig::default()
        };
        let schedule = Schedule {
            queries: 1,
            query_every: 6,
            pool: 2,
        };
        let desk = HumanDesk::new(&dir, None).unwrap();
        let mut head = PreferenceHead::new(1, 2, config, schedule, Labeller::Human(desk)).unwrap();
        let person = {
            let dir = dir.clone();
            std::thread::spawn(move || {
                loop {
                    if let Ok(Some(round)) = super::super::human::OpenRound::oldest(&dir) {
                        let frames = round.frames(0).unwrap();
                        round.answer(&[1.0]).unwrap();
                        return frames;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            })
        };
        let mut out = [0.0; 2];
        for t in 0..3 {
            let pixels: Vec<u8> = (0..2)
                .flat_map(|v| (0..2).flat_map(move |k| [[60 * t, 120 * k, 200 * v]; 4]))
                .flatten()
                .collect();
            let embeddings = Embeddings {
                dim: 1,
                values: vec![0.0, 1.0],
            };
            let step = StepFrames {
                embeddings: &embeddings,
                views: &embeddings,
                envs: &[0, 1],
                done: &[false; 2],
                task: &[0.0; 2],
                pixels: &pixels,
                side: 2,
                instructions: None,
            };
            head.rewards(&step, &mut out).unwrap();
        }
        assert_eq!(head.labels(), 1);
        let frames = person.join().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(frames.len(), 3);
        // The pair is env 0's segment and env 1's, in either order.
        let left_env = usize::from(frames[0].get_pixel(0, 0)[1] > 60);
        for (t, frame) in frames.iter().enumerate() {
            for (x, k) in [(0, left_env), (2 + 4, 1 - left_env)] {
                for (y, v) in [(0, 0), (3, 1)] {
                    let want = [60 * t, 120 * k, 200 * v];
                    let got = frame.get_pixel(x, y).0;
                    let near = got.iter().zip(want).all(|(g, w)| g.abs_diff(w as u8) < 12);
                    assert!(near, "frame {t}, env {k}, view {v}: {got:?} vs {want:?}");
                }
            }
        }
    }
}
