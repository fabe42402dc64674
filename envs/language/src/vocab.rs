//! Token ids shared by the text tasks: 0 is padding, digits are `1 ..= 10`.

/// Padding, placed after a sequence.
pub const PAD: u32 = 0;
/// Token of digit 0; digit `d` is `DIGIT0 + d`.
pub const DIGIT0: u32 = 1;
/// First id after the digits, where each task's own symbols start.
pub const SYMBOLS: u32 = DIGIT0 + 10;

/// The token of decimal digit `d` (0–9).
pub fn digit(d: u64) -> u32 {
    DIGIT0 + (d % 10) as u32
}

/// The digit a token stands for, if it is a digit.
pub fn as_digit(token: u32) -> Option<u64> {
    (DIGIT0..SYMBOLS)
        .contains(&token)
        .then(|| u64::from(token - DIGIT0))
}

/// Writes `value` as exactly `out.len()` digit tokens, most significant first, zero-padded.
pub fn write_number(value: u64, out: &mut [f32]) {
    let mut v = value;
    for slot in out.iter_mut().rev() {
        *slot = digit(v) as f32;
        v /= 10;
    }
}

/// Reads digit tokens, most significant first; `None` if any token is not a digit.
pub fn read_number(tokens: &[u32]) -> Option<u64> {
    tokens.iter().try_fold(0u64, |acc, &t| {
        as_digit(t).map(|d| acc.saturating_mul(10).saturating_add(d))
    })
}
