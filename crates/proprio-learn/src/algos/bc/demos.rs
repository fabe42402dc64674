//! Demonstrations files: observation rows of an env stack a learner sees
//! (pixels included) and the scripted expert's action at each — from its
//! own successful episodes or a learner's (DAgger, [`super::record`]) — in
//! one safetensors file (pixels as bytes, a quarter of their size as floats,
//! in the file and in memory).

use super::rows::ObsRows;
use crate::base::error::{LearnError, Result};
use crate::base::tensor::{le_bytes, le_floats};
use crate::env::EnvSource;
use crate::nets::encoder::ObsLayout;
use crate::nets::head::standard_normal;
use proprio::{ActMode, EnvRng, Space};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

/// Envs the expert runs side by side (fixed, so the file does not depend on the machine).
pub const DEMO_ENVS: usize = 32;

/// The metadata key of the header in the file.
const HEADER_KEY: &str = "proprio_demos";

/// What a demonstrations file holds besides its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DemoHeader {
    /// The env stack the observations come from (id, whole config, observation options).
    pub env: EnvSource,
    /// Width of one observation row.
    pub obs_dim: usize,
    /// Width of one action row.
    pub action_dim: usize,
    /// Successful episodes kept.
    pub episodes: usize,
    /// Episodes kept of each instruction (all episodes, for an env without one).
    pub per_instruction: usize,
    /// Distinct instructions seen.
    pub instructions: usize,
    /// Episodes the expert finished, and how many of them it succeeded in.
    pub expert_episodes: usize,
    /// Successful expert episodes (kept or not).
    pub expert_successes: usize,
    /// Seed of the env streams and the noise.
    pub seed: u64,
    /// Standard deviation of the Gaussian noise added to the actions the
    /// envs receive, in action units (the recorded actions stay the expert's).
    #[serde(default)]
    pub noise: f32,
    /// DAgger rounds whose rows follow the expert's own episodes, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<DaggerRound>,
}

/// One DAgger round: episodes a learner acted in, every state labelled with
/// the expert's action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DaggerRound {
    /// The policy that acted (a run directory, as the caller names it).
    pub policy: String,
    /// Chance that a step acted the expert's action instead of the policy's (DAgger's β).
    pub beta: f32,
    /// Seed of the env streams and the mixing.
    pub seed: u64,
    /// Episodes recorded, successful or not.
    pub episodes: usize,
    /// Of them, successes.
    pub successes: usize,
}

/// Observation and action rows of kept episodes, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Demonstrations {
    /// What they are.
    pub header: DemoHeader,
    /// Observations `[rows × obs_dim]`, as the learner's env stack gives
    /// them (pixels held as bytes).
    pub obs: ObsRows,
    /// The expert's actions `[rows × action_dim]`, clipped into a box's bounds.
    pub actions: Vec<f32>,
    /// Rows of each kept episode, in order (empty in files written before
    /// episodes were recorded: their rows are one run).
    pub episode_rows: Vec<usize>,
}

impl Demonstrations {
    /// Observation-action pairs.
    pub fn rows(&self) -> usize {
        self.actions.len() / self.header.action_dim.max(1)
    }

    /// Each kept episode's rows, in order, or `None` for a file written
    /// before episodes were recorded.
    pub fn episodes(&self) -> Option<impl Iterator<Item = std::ops::Range<usize>> + '_> {
        if self.episode_rows.is_empty() {
            return None;
        }
        Some(self.episode_rows.iter().scan(0, |start, &rows| {
            let range = *start..*start + rows;
            *start += rows;
            Some(range)
        }))
    }

    /// Appends `later`'s episodes (a DAgger round on the same env stack)
    /// after these: DAgger's aggregated dataset.
    pub fn aggregate(&mut self, later: Demonstrations) -> Result<()> {
        let (ours, theirs) = (&self.header, &later.header);
        if ours.env != theirs.env || ours.obs_dim != theirs.obs_dim {
            return Err(LearnError::Config(format!(
                "demonstrations of {} (config {}, {} observation values) cannot join those of {} (config {}, {})",
                theirs.env.id,
                theirs.env.config,
                theirs.obs_dim,
                ours.env.id,
                ours.env.config,
                ours.obs_dim
            )));
        }
        if self.episode_rows.is_empty() || later.episode_rows.is_empty() {
            return Err(LearnError::Config(
                "a demonstrations file from before episodes were recorded cannot be aggregated; record it again with `proprio demos`".into(),
            ));
        }
        self.header.episodes += later.header.episodes;
        self.header.instructions = self.header.instructions.max(later.header.instructions);
        self.header.rounds.extend(later.header.rounds);
        if !self.obs.append(later.obs) {
            return Err(LearnError::Config(
                "demonstrations with images in other places cannot be aggregated".into(),
            ));
        }
        self.actions.extend(later.actions);
        self.episode_rows.extend(later.episode_rows);
        Ok(())
    }

    /// Writes the file (refusing to replace one).
    pub fn write(&self, path: &Path) -> Result<()> {
        if path.exists() {
            return Err(LearnError::Config(format!(
                "{} already exists; choose a new file",
                path.display()
            )));
        }
        let (d, n) = (self.header.obs_dim, self.rows());
        let (values, pixels) = self.obs.parts();
        let p = self.obs.pixel_width();
        let values = le_bytes(values);
        let actions = le_bytes(&self.actions);
        let fail = |e: safetensors::SafeTensorError| LearnError::Config(e.to_string());
        let mut views = vec![
            (
                "obs",
                TensorView::new(Dtype::F32, vec![n, d - p], &values).map_err(fail)?,
            ),
            (
                "actions",
                TensorView::new(Dtype::F32, vec![n, self.header.action_dim], &actions)
                    .map_err(fail)?,
            ),
        ];
        let lengths: Vec<u8> = self
            .episode_rows
            .iter()
            .flat_map(|&r| (r as u64).to_le_bytes())
            .collect();
        if !self.episode_rows.is_empty() {
            views.push((
                "episode_rows",
                TensorView::new(Dtype::U64, vec![self.episode_rows.len(), 1], &lengths)
                    .map_err(fail)?,
            ));
        }
        if p > 0 {
            views.push((
                "pixels",
                TensorView::new(Dtype::U8, vec![n, p], pixels).map_err(fail)?,
            ));
        }
        let header = proprio::serde_json::to_string(&self.header)
            .map_err(|e| LearnError::Config(e.to_string()))?;
        let metadata = Some(HashMap::from([(HEADER_KEY.to_string(), header)]));
        let partial = path.with_extension("partial");
        // Streamed to the file: a pixel file is not built a second time in memory.
        safetensors::serialize_to_file(views, metadata, &partial)
            .map_err(|e| LearnError::Config(format!("cannot write {}: {e}", partial.display())))?;
        std::fs::rename(&partial, path).map_err(LearnError::io(path))
    }

    /// Reads a file [`Demonstrations::write`] wrote.
    pub fn read(path: &Path) -> Result<Self> {
        let mut data = std::fs::read(path).map_err(LearnError::io(path))?;
        let bad = |what: String| {
            LearnError::Config(format!(
                "{} is not a demonstrations file: {what}",
                path.display()
            ))
        };
        let (header_len, metadata) =
            SafeTensors::read_metadata(&data).map_err(|e| bad(e.to_string()))?;
        let header = metadata
            .metadata()
            .as_ref()
            .and_then(|m| m.get(HEADER_KEY))
            .ok_or_else(|| bad(format!("no {HEADER_KEY} header")))?;
        let header: DemoHeader =
            proprio::serde_json::from_str(header).map_err(|e| bad(e.to_string()))?;
        let d = header.obs_dim;
        let columns = pixel_columns(&header)?;
        let p = columns.iter().map(|c| c.len()).sum::<usize>();
        let tensors = SafeTensors::deserialize(&data).map_err(|e| bad(e.to_string()))?;
        let view = |name: &str, dtype: Dtype, width: usize| -> Result<&[u8]> {
            let view = tensors.tensor(name).map_err(|e| bad(e.to_string()))?;
            if view.dtype() != dtype || view.shape().get(1) != Some(&width) {
                return Err(bad(format!("{name} is not {dtype:?} rows of {width}")));
            }
            Ok(view.data())
        };
        let floats = |bytes: &[u8]| -> Vec<f32> { le_floats(bytes).collect() };
        let actions = floats(view("actions", Dtype::F32, header.action_dim)?);
        let episode_rows = if tensors.names().contains(&"episode_rows") {
            view("episode_rows", Dtype::U64, 1)?
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()) as usize)
                .collect()
        } else {
            Vec::new()
        };
        let obs = match metadata.info("pixels").map(|info| info.data_offsets) {
            Some((start, end)) => {
                let values = floats(view("obs", Dtype::F32, d - p)?);
                view("pixels", Dtype::U8, p)?;
                drop(tensors);
                // The pixels stay in the buffer they were read into (a pixel
                // file is gigabytes): the rest of the file is cut away.
                let base = std::mem::size_of::<u64>() + header_len;
                data.truncate(base + end);
                data.drain(..base + start);
                data.shrink_to_fit();
                ObsRows::new(d, &columns)
                    .from_parts(values, data)
                    .ok_or_else(|| bad("pixel and value rows disagree".into()))?
            }
            None => {
                // Files of every value as f32 (before pixels were stored as bytes).
                let mut all = ObsRows::new(d, &columns);
                all.extend_from_slice(&floats(view("obs", Dtype::F32, d)?));
                all
            }
        };
        let demos = Self {
            obs,
            actions,
            header,
            episode_rows,
        };
        if demos.obs.len() != demos.rows() || demos.rows() == 0 {
            return Err(bad("observation and action rows disagree".into()));
        }
        let episodes = demos.episode_rows.iter().sum::<usize>();
        if !demos.episode_rows.is_empty()
            && (episodes != demos.rows() || demos.episode_rows.contains(&0))
        {
            return Err(bad(format!(
                "its episodes hold {episodes} rows, the file {}",
                demos.rows()
            )));
        }
        Ok(demos)
    }
}

/// Empty observation rows of `header`'s env stack, its pixels held as bytes.
pub fn obs_rows(header: &DemoHeader) -> Result<ObsRows> {
    Ok(ObsRows::new(header.obs_dim, &pixel_columns(header)?))
}

/// Which observation columns hold pixels (integers 0–255): kept as bytes.
fn pixel_columns(header: &DemoHeader) -> Result<Vec<Range<usize>>> {
    let columns = ObsLayout::new(&header.env.observation_space()?)?.pixel_columns();
    if columns.iter().any(|c| c.end > header.obs_dim) {
        return Err(LearnError::Config(format!(
            "demonstrations of {} name {} observation values, fewer than its images hold",
            header.env.id, header.obs_dim
        )));
    }
    Ok(columns)
}

/// Adds Gaussian noise of standard deviation `noise` to every action value
/// and clips it into the box `[low, high]` (DART's perturbed expert).
pub(super) fn perturb(
    actions: &mut [f32],
    noise: f32,
    low: &[f32],
    high: &[f32],
    rng: &mut EnvRng,
) {
    let a = low.len();
    for (k, y) in actions.iter_mut().enumerate() {
        *y = (*y + noise * standard_normal(rng)).clamp(low[k % a], high[k % a]);
    }
}

/// An agent that reads the env's raw state acting on a learner's env stack
/// (the scripted expert, or a policy trained on state): it reads the raw
/// state at the end of each observation row (after any pixels or tokens the
/// stack puts first) and its actions are clipped into the box.
pub(super) struct StateAgent {
    agent: Box<dyn proprio::Agent>,
    raw: usize,
    obs_dim: usize,
    action_space: Space,
    state: Vec<f32>,
}

impl StateAgent {
    /// `source`'s scripted expert on the stack whose spec is `stack`.
    pub(super) fn expert(source: &EnvSource, stack: &proprio::EnvSpec) -> Result<Self> {
        let registry = proprio::registry();
        let spec = registry.spec(&source.id, &source.config)?;
        Self::new(registry.scripted(&source.id, &spec)?, source, stack)
    }

    /// `agent`, which acts on `source`'s raw state, on the stack whose spec is `stack`.
    pub(super) fn new(
        agent: Box<dyn proprio::Agent>,
        source: &EnvSource,
        stack: &proprio::EnvSpec,
    ) -> Result<Self> {
        let spec = proprio::registry().spec(&source.id, &source.config)?;
        Ok(Self {
            agent,
            raw: spec.observation_space.flat_dim(),
            obs_dim: stack.observation_space.flat_dim(),
            action_space: stack.action_space.clone(),
            state: Vec::new(),
        })
    }

    /// The agent's actions `[n × A]` for the stack's observations `[n × D]`.
    pub(super) fn act(&mut self, obs: &[f32], actions: &mut [f32]) -> Result<()> {
        let (d, raw) = (self.obs_dim, self.raw);
        self.state.clear();
        for row in obs.chunks_exact(d) {
            self.state.extend_from_slice(&row[d - raw..]);
        }
        self.agent
            .act(&self.state, actions, ActMode::Deterministic)?;
        if let Space::Box { low, high } = &self.action_space {
            let a = low.len();
            for (k, x) in actions.iter_mut().enumerate() {
                *x = x.clamp(low[k % a], high[k % a]);
            }
        }
        Ok(())
    }
}
