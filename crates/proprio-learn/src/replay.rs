//! A ring-buffer replay memory on the host, shared by the off-policy learners.

use proprio::EnvRng;
use proprio::memory;
use proprio::rand::RngExt;
use serde::{Deserialize, Serialize};

/// Transitions `(obs, action, reward, next_obs, terminated)`, oldest overwritten first.
#[derive(Debug, Clone, Serialize, Deserialize)]
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
