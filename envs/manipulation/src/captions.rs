//! What a reach state looks like, in words: the captions an in-domain CLIP
//! is trained on (`proprio reward-model fit-clip`).

/// Observation length of reach with the goal in the state (layout in `docs/envs.md`).
const REACH_OBS: usize = 32;
/// Where `goal − TCP` sits in a reach observation.
const GOAL_OFFSET: std::ops::Range<usize> = 29..32;

/// How far the gripper is from the goal ball: "touches" (under 3 cm, about
/// the success radius), "close to" (8 cm), "near" (16 cm) or "far from".
pub fn reach(obs: &[f32]) -> Option<String> {
    if obs.len() != REACH_OBS {
        return None;
    }
    let d = obs[GOAL_OFFSET].iter().map(|x| x * x).sum::<f32>().sqrt();
    let how = match d {
        d if d < 0.03 => "touches",
        d if d < 0.08 => "is close to",
        d if d < 0.16 => "is near",
        _ => "is far from",
    };
    Some(format!("the gripper {how} the green ball"))
}
