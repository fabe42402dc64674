//! A ring-buffer replay memory on the host, shared by the off-policy learners,
//! saved with every checkpoint as safetensors (the stored rows only).

use crate::base::error::{LearnError, Result};
use crate::base::tensor::{le_bytes, le_floats};
use crate::run::integrity::write_atomic;
use proprio::EnvRng;
use proprio::memory;
use proprio::rand::RngExt;
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// The safetensors metadata key of a saved buffer's [`Layout`].
const LAYOUT_KEY: &str = "proprio.replay";

/// The buffer's file in a checkpoint folder.
const FILE: &str = "replay.safetensors";

/// Transitions `(obs, action, reward, next_obs, terminated)`, oldest overwritten first.
/// (`Deserialize` reads the JSON buffers of checkpoints written before safetensors.)
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReplayBuffer {
    obs_dim: usize,
    action_dim: usize,
    capacity: usize,
    len: usize,
    next: usize,
    obs: Vec<f32>,
    actions: Vec<f32>,
    rewards: Vec<f32>,
    next_obs: Vec<f32>,
    terminated: Vec<f32>,
}

/// A saved buffer's sizes and ring position (the tensors hold its first `len` rows).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
struct Layout {
    obs_dim: usize,
    action_dim: usize,
    capacity: usize,
    len: usize,
    next: usize,
}

/// A sampled minibatch, row-major.
pub struct Sample {
    pub obs: Vec<f32>,
    pub actions: Vec<f32>,
    pub rewards: Vec<f32>,
    pub next_obs: Vec<f32>,
    pub terminated: Vec<f32>,
}

impl ReplayBuffer {
    /// An empty buffer of `capacity` transitions; refused up front when it cannot fit in memory.
    pub fn new(capacity: usize, obs_dim: usize, action_dim: usize) -> proprio::Result<Self> {
        let floats_per_transition = 2 * obs_dim + action_dim + 2;
        let what = format!("a replay buffer of {capacity} transitions");
        memory::check(
            &what,
            memory::bytes_of(&[capacity, floats_per_transition], 4),
        )?;
        Ok(Self {
            obs_dim,
            action_dim,
            capacity,
            len: 0,
            next: 0,
            obs: memory::filled(&what, capacity * obs_dim, 0.0)?,
            actions: memory::filled(&what, capacity * action_dim, 0.0)?,
            rewards: memory::filled(&what, capacity, 0.0)?,
            next_obs: memory::filled(&what, capacity * obs_dim, 0.0)?,
            terminated: memory::filled(&what, capacity, 0.0)?,
        })
    }

    /// Raises the capacity to `capacity` (a resumed run that trains for
    /// longer), keeping every stored transition in order, oldest first.
    pub fn grow(&mut self, capacity: usize) -> proprio::Result<()> {
        if capacity <= self.capacity {
            return Ok(());
        }
        let mut grown = Self::new(capacity, self.obs_dim, self.action_dim)?;
        // Chronological order: a full ring's oldest transition sits at `next`.
        let start = if self.len == self.capacity {
            self.next
        } else {
            0
        };
        let (d, a) = (self.obs_dim, self.action_dim);
        for k in 0..self.len {
            let i = (start + k) % self.capacity;
            grown.push(
                &self.obs[i * d..(i + 1) * d],
                &self.actions[i * a..(i + 1) * a],
                self.rewards[i],
                &self.next_obs[i * d..(i + 1) * d],
                self.terminated[i] != 0.0,
            );
        }
        *self = grown;
        Ok(())
    }

    /// Writes the buffer into the checkpoint folder `dir`.
    pub fn save(&self, dir: &Path) -> Result<()> {
        self.write(&dir.join(FILE))
    }

    /// The buffer of the checkpoint folder `dir` (JSON in checkpoints written
    /// before 2026-11-29), raised to `capacity`: a resumed run may train for
    /// longer than the buffer was sized for.
    pub fn load(dir: &Path, capacity: usize) -> Result<Self> {
        let mut buffer = match dir.join(FILE) {
            path if path.exists() => Self::read(&path)?,
            _ => crate::run::read_json(&dir.join("replay.json"))?,
        };
        buffer.grow(capacity)?;
        Ok(buffer)
    }

    /// Writes the stored rows and the ring position to `path` (safetensors,
    /// atomically): little-endian floats, 4 bytes each instead of JSON's ~20.
    pub fn write(&self, path: &Path) -> Result<()> {
        let (n, d, a) = (self.len, self.obs_dim, self.action_dim);
        let columns = [
            ("obs", le_bytes(&self.obs[..n * d]), d),
            ("actions", le_bytes(&self.actions[..n * a]), a),
            ("rewards", le_bytes(&self.rewards[..n]), 1),
            ("next_obs", le_bytes(&self.next_obs[..n * d]), d),
            ("terminated", le_bytes(&self.terminated[..n]), 1),
        ];
        let fail = |message: String| LearnError::Checkpoint {
            path: path.to_path_buf(),
            message,
        };
        let views = columns
            .iter()
            .map(|(name, data, width)| {
                TensorView::new(Dtype::F32, vec![n, *width], data)
                    .map(|view| (*name, view))
                    .map_err(|e| fail(e.to_string()))
            })
            .collect::<Result<Vec<_>>>()?;
        let layout = Layout {
            obs_dim: d,
            action_dim: a,
            capacity: self.capacity,
            len: n,
            next: self.next,
        };
        let layout = proprio::serde_json::to_string(&layout).map_err(|e| fail(e.to_string()))?;
        let metadata = Some(HashMap::from([(LAYOUT_KEY.to_string(), layout)]));
        let data = safetensors::serialize(views, metadata).map_err(|e| fail(e.to_string()))?;
        write_atomic(path, &data)
    }

    /// Reads a buffer [`ReplayBuffer::write`] wrote, checking every size against its layout.
    pub fn read(path: &Path) -> Result<Self> {
        let bad = |message: String| LearnError::Checkpoint {
            path: path.to_path_buf(),
            message,
        };
        let data = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
        let (_, metadata) =
            SafeTensors::read_metadata(&data).map_err(|e| bad(format!("malformed: {e}")))?;
        let layout = metadata
            .metadata()
            .as_ref()
            .and_then(|m| m.get(LAYOUT_KEY))
            .ok_or_else(|| bad(format!("no {LAYOUT_KEY} layout: not a replay buffer")))?;
        let layout: Layout =
            proprio::serde_json::from_str(layout).map_err(|e| bad(format!("malformed: {e}")))?;
        let Layout {
            obs_dim,
            action_dim,
            capacity,
            len,
            next,
        } = layout;
        let ring = len <= capacity && next < capacity.max(1) && (len == capacity || next == len);
        if !ring {
            return Err(bad(format!(
                "malformed: {len} rows, next {next}, in a ring of {capacity}"
            )));
        }
        let tensors =
            SafeTensors::deserialize(&data).map_err(|e| bad(format!("malformed: {e}")))?;
        let mut buffer = Self::new(capacity, obs_dim, action_dim)?;
        let columns: [(&str, usize, &mut Vec<f32>); 5] = [
            ("obs", obs_dim, &mut buffer.obs),
            ("actions", action_dim, &mut buffer.actions),
            ("rewards", 1, &mut buffer.rewards),
            ("next_obs", obs_dim, &mut buffer.next_obs),
            ("terminated", 1, &mut buffer.terminated),
        ];
        for (name, width, column) in columns {
            let view = tensors
                .tensor(name)
                .map_err(|e| bad(format!("malformed: {e}")))?;
            if view.dtype() != Dtype::F32 || view.shape() != [len, width] {
                return Err(bad(format!(
                    "malformed: {name} is not {len} f32 rows of {width}"
                )));
            }
            for (x, value) in column.iter_mut().zip(le_floats(view.data())) {
                *x = value;
            }
        }
        (buffer.len, buffer.next) = (len, next);
        Ok(buffer)
    }

    /// Transitions it holds before overwriting the oldest.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Transitions stored.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds one transition, overwriting the oldest when full.
    pub fn push(
        &mut self,
        obs: &[f32],
        action: &[f32],
        reward: f32,
        next_obs: &[f32],
        terminated: bool,
    ) {
        let (i, d, a) = (self.next, self.obs_dim, self.action_dim);
        self.obs[i * d..(i + 1) * d].copy_from_slice(obs);
        self.actions[i * a..(i + 1) * a].copy_from_slice(action);
        self.rewards[i] = reward;
        self.next_obs[i * d..(i + 1) * d].copy_from_slice(next_obs);
        self.terminated[i] = f32::from(u8::from(terminated));
        self.next = (self.next + 1) % self.capacity;
        self.len = (self.len + 1).min(self.capacity);
    }

    /// `batch` transitions drawn uniformly with replacement.
    pub fn sample(&self, batch: usize, rng: &mut EnvRng) -> Sample {
        let (d, a) = (self.obs_dim, self.action_dim);
        let mut s = Sample {
            obs: Vec::with_capacity(batch * d),
            actions: Vec::with_capacity(batch * a),
            rewards: Vec::with_capacity(batch),
            next_obs: Vec::with_capacity(batch * d),
            terminated: Vec::with_capacity(batch),
        };
        for _ in 0..batch {
            let i = rng.random_range(0..self.len.max(1));
            s.obs.extend_from_slice(&self.obs[i * d..(i + 1) * d]);
            s.actions
                .extend_from_slice(&self.actions[i * a..(i + 1) * a]);
            s.rewards.push(self.rewards[i]);
            s.next_obs
                .extend_from_slice(&self.next_obs[i * d..(i + 1) * d]);
            s.terminated.push(self.terminated[i]);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::run::read_json;
    use proprio::episode_rng;

    fn filled(capacity: usize, pushes: usize) -> ReplayBuffer {
        let mut buffer = ReplayBuffer::new(capacity, 3, 2).unwrap();
        for k in 0..pushes {
            let x = k as f32;
            buffer.push(
                &[x, -x, 0.5 * x],
                &[x.sin(), x.cos()],
                1.0 / (x + 1.0),
                &[x + 1.0, 2.0, 3.0],
                k % 7 == 3,
            );
        }
        buffer
    }

    /// Zero rows of the test buffer's widths under a layout `(capacity, len, next)`.
    fn write_rows(path: &Path, (capacity, len, next): (usize, usize, usize), rows: usize) {
        let layout = Layout {
            obs_dim: 3,
            action_dim: 2,
            capacity,
            len,
            next,
        };
        let zeros = |width: usize| vec![0u8; 4 * rows * width];
        let columns = [
            ("obs", 3),
            ("actions", 2),
            ("rewards", 1),
            ("next_obs", 3),
            ("terminated", 1),
        ];
        let data: Vec<_> = columns
            .iter()
            .map(|&(name, w)| (name, zeros(w), w))
            .collect();
        let views = data.iter().map(|(name, bytes, w)| {
            (
                *name,
                TensorView::new(Dtype::F32, vec![rows, *w], bytes).unwrap(),
            )
        });
        let meta = HashMap::from([(
            LAYOUT_KEY.to_string(),
            proprio::serde_json::to_string(&layout).unwrap(),
        )]);
        std::fs::write(path, safetensors::serialize(views, Some(meta)).unwrap()).unwrap();
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("proprio-replay-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("replay.safetensors")
    }

    /// A buffer part full and one that has wrapped around come back equal, and sample the same rows.
    #[test]
    fn a_written_buffer_reads_back_equal_and_samples_the_same_rows() {
        for (name, pushes) in [("part", 5), ("wrapped", 23), ("empty", 0)] {
            let buffer = filled(8, pushes);
            let path = scratch(name);
            buffer.write(&path).unwrap();
            let back = ReplayBuffer::read(&path).unwrap();
            assert_eq!(back, buffer, "{name}");
            let (mut r1, mut r2) = (episode_rng(1, 0, 0), episode_rng(1, 0, 0));
            assert_eq!(
                back.sample(16, &mut r1).obs,
                buffer.sample(16, &mut r2).obs,
                "{name}"
            );
            std::fs::remove_file(&path).unwrap();
        }
    }

    /// A TD3 checkpoint's JSON buffer (written before safetensors) loads, and survives the new format.
    #[test]
    fn an_old_json_buffer_still_reads_and_converts() {
        let old = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/old-runs/td3-pendulum/checkpoint");
        let buffer = ReplayBuffer::load(&old, 0).unwrap();
        assert_eq!(buffer, read_json(&old.join("replay.json")).unwrap());
        assert!(!buffer.is_empty());
        let path = scratch("old");
        buffer.write(&path).unwrap();
        assert_eq!(ReplayBuffer::read(&path).unwrap(), buffer);
        std::fs::remove_file(&path).unwrap();
    }

    /// A cut file, another safetensors file and rows that disagree with the layout are errors.
    #[test]
    fn a_damaged_or_foreign_file_is_a_checkpoint_error() {
        let path = scratch("bad");
        filled(8, 5).write(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 9]).unwrap();
        let cut = ReplayBuffer::read(&path).unwrap_err().to_string();
        assert!(cut.contains("malformed"), "{cut}");
        let data = 0f32.to_le_bytes();
        let view = TensorView::new(Dtype::F32, vec![1, 1], &data).unwrap();
        std::fs::write(&path, safetensors::serialize([("w", view)], None).unwrap()).unwrap();
        let foreign = ReplayBuffer::read(&path).unwrap_err().to_string();
        assert!(foreign.contains("not a replay buffer"), "{foreign}");
        for (layout, rows) in [
            ((8, 6, 6), 5), // the layout says 6 rows, the tensors hold 5
            ((8, 5, 2), 5), // 5 rows of a ring that has not wrapped, yet next is 2
            ((4, 5, 1), 5), // more rows than the ring holds
        ] {
            write_rows(&path, layout, rows);
            let error = ReplayBuffer::read(&path).unwrap_err().to_string();
            assert!(error.contains("malformed"), "{layout:?}: {error}");
        }
        std::fs::remove_file(&path).unwrap();
    }
}
