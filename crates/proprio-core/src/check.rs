//! Range checks of config values, whose messages name the key: one wording
//! for every family's "must be in" errors.

/// `v` if finite and within `[low, high]`; otherwise the message naming `key`.
pub fn finite_in(key: &str, v: f32, low: f32, high: f32) -> Result<f32, String> {
    if v.is_finite() && (low..=high).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{key} must be in [{low}, {high}], got {v}"))
    }
}

/// `v` if within `low..=high`; otherwise the message naming `key`.
pub fn whole_in(key: &str, v: u32, low: u32, high: u32) -> Result<u32, String> {
    if (low..=high).contains(&v) {
        Ok(v)
    } else {
        Err(format!("{key} must be in {low}..={high}, got {v}"))
    }
}

/// Physics steps per control step, `physics_hz / control_hz`; refused unless a positive whole number.
pub fn substeps(physics_hz: u32, control_hz: u32) -> Result<u32, String> {
    if control_hz == 0 || physics_hz == 0 || !physics_hz.is_multiple_of(control_hz) {
        return Err(format!(
            "physics_hz ({physics_hz}) must be a positive multiple of control_hz ({control_hz})"
        ));
    }
    Ok(physics_hz / control_hz)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_in_range_pass_and_others_name_their_key() {
        assert_eq!(finite_in("dt", 0.5, 0.0, 1.0), Ok(0.5));
        assert_eq!(finite_in("dt", 1.0, 0.0, 1.0), Ok(1.0));
        assert_eq!(
            finite_in("dt", f32::NAN, 0.0, 1.0),
            Err("dt must be in [0, 1], got NaN".into())
        );
        assert_eq!(
            finite_in("dt", 1.5, 0.0, 1.0),
            Err("dt must be in [0, 1], got 1.5".into())
        );
        assert_eq!(whole_in("lanes", 8, 1, 8), Ok(8));
        assert_eq!(
            whole_in("lanes", 0, 1, 8),
            Err("lanes must be in 1..=8, got 0".into())
        );
        assert_eq!(substeps(500, 100), Ok(5));
        for (physics, control) in [(500, 0), (0, 100), (500, 300)] {
            let message = format!(
                "physics_hz ({physics}) must be a positive multiple of control_hz ({control})"
            );
            assert_eq!(substeps(physics, control), Err(message));
        }
    }
}
