//! The one dense solve IK needs: `(A + λ²I) x = b` for a small symmetric positive-definite A.

/// Largest system solved (a 6-D end-effector task).
pub const MAX: usize = 6;

/// Solves `(a + damping·I) x = b` for the leading `n × n` block by Cholesky;
/// `None` if the damped matrix is not positive definite.
pub fn solve_damped(
    a: &[[f64; MAX]; MAX],
    damping: f64,
    b: &[f64; MAX],
    n: usize,
) -> Option<[f64; MAX]> {
    let mut l = [[0.0; MAX]; MAX];
    for i in 0..n {
        for j in 0..=i {
            let dot: f64 = l[i][..j].iter().zip(&l[j][..j]).map(|(x, y)| x * y).sum();
            let sum = a[i][j] + if i == j { damping } else { 0.0 } - dot;
            if i == j {
                if sum <= 0.0 {
                    return None;
                }
                l[i][i] = sum.sqrt();
            } else {
                l[i][j] = sum / l[j][j];
            }
        }
    }
    let mut y = [0.0; MAX];
    for i in 0..n {
        let s: f64 = (0..i).map(|k| l[i][k] * y[k]).sum();
        y[i] = (b[i] - s) / l[i][i];
    }
    let mut x = [0.0; MAX];
    for i in (0..n).rev() {
        let s: f64 = (i + 1..n).map(|k| l[k][i] * x[k]).sum();
        x[i] = (y[i] - s) / l[i][i];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_damped_spd_system() {
        let mut a = [[0.0; MAX]; MAX];
        a[0] = [4.0, 1.0, 0.0, 0.0, 0.0, 0.0];
        a[1] = [1.0, 3.0, 0.5, 0.0, 0.0, 0.0];
        a[2] = [0.0, 0.5, 2.0, 0.0, 0.0, 0.0];
        let b = [1.0, 2.0, 3.0, 0.0, 0.0, 0.0];
        let x = solve_damped(&a, 0.1, &b, 3).unwrap();
        for i in 0..3 {
            let row: f64 = (0..3)
                .map(|j| (a[i][j] + if i == j { 0.1 } else { 0.0 }) * x[j])
                .sum();
            assert!((row - b[i]).abs() < 1e-12, "row {i}: {row} vs {}", b[i]);
        }
        let mut singular = [[0.0; MAX]; MAX];
        singular[0][0] = -1.0;
        assert!(solve_damped(&singular, 0.0, &b, 1).is_none());
    }
}
