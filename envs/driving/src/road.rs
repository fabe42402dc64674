//! Road geometry: roads and closed tracks as chains of straights and
//! circular arcs ([`Segment`]), the Frenet queries the tasks ask every step
//! (arc length, lateral offset, heading, curvature ahead) without
//! allocating, and the seeded generators of winding roads and race tracks.

use crate::state::{MAX_SEGMENTS, Segment};
use proprio_core::EnvRng;
use proprio_core::rand::RngExt;
use std::f32::consts::{PI, TAU};

/// Below this |curvature|, 1/m, a segment is a straight.
pub const STRAIGHT: f32 = 1e-6;
/// Shortest piece of a generated track, m: longer than a car drives in one
/// control step, so the near search of [`project_near`] never skips one.
pub const MIN_PIECE: f32 = 6.0;

/// Where a point lies relative to a road.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Frenet {
    /// Arc length of the nearest road point, m.
    pub s: f32,
    /// Signed lateral offset from the reference line, m (positive left).
    pub d: f32,
    /// Heading of the reference line there, rad.
    pub heading: f32,
    /// Curvature of the reference line there, 1/m.
    pub curvature: f32,
    /// Index of the segment.
    pub seg: usize,
}

/// Wraps an angle into (−π, π].
pub fn wrap(a: f32) -> f32 {
    let w = (a + PI).rem_euclid(TAU) - PI;
    if w <= -PI { w + TAU } else { w }
}

/// The point `u` m along a segment of curvature `k` in its own frame (start
/// at the origin, heading +x): `(sin(ku)/k, (1 − cos(ku))/k)`, written so
/// that gentle arcs (k → 0) keep full precision.
fn local_point(k: f32, u: f32) -> [f32; 2] {
    if k.abs() < STRAIGHT {
        return [u, 0.0];
    }
    let half = (0.5 * k * u).sin();
    [(k * u).sin() / k, 2.0 * half * half / k]
}

/// The point and heading `u` m along segment `g`, offset `d` m to its left.
pub fn point_on(g: &Segment, u: f32, d: f32) -> ([f32; 2], f32) {
    let [x, y, h0, k, _, _] = *g;
    let h = h0 + k * u;
    let (s0, c0) = h0.sin_cos();
    let (s1, c1) = h.sin_cos();
    let [lx, ly] = local_point(k, u);
    (
        [
            x + lx * c0 - ly * s0 - d * s1,
            y + lx * s0 + ly * c0 + d * c1,
        ],
        h,
    )
}

/// Nearest point of segment `g` to `p`: (u along the segment, signed offset, squared distance).
///
/// Everything is computed in the segment's own frame and, on arcs, scaled by
/// the curvature, never through the arc's centre: a gentle arc's centre lies
/// kilometres away, where a float's rounding alone is a quarter of a millimetre.
fn project_segment(g: &Segment, p: [f32; 2]) -> (f32, f32, f32) {
    let [x, y, h0, k, len, _] = *g;
    let (s0, c0) = h0.sin_cos();
    let (rx, ry) = (p[0] - x, p[1] - y);
    let (lx, ly) = (rx * c0 + ry * s0, -rx * s0 + ry * c0);
    if k.abs() < STRAIGHT {
        let u = lx.clamp(0.0, len);
        return (u, ly, (lx - u) * (lx - u) + ly * ly);
    }
    // (k lx, 1 − k ly) points from the centre through p, scaled by |k|:
    // its angle is k·u of the foot, its length |k|·(distance to the centre).
    let (qx, qy) = (k * lx, 1.0 - k * ly);
    let q = qx.hypot(qy);
    // Measured from the arc's middle, so arcs up to a full turn resolve unambiguously.
    let mid = 0.5 * k * len;
    let u = ((wrap(qx.atan2(qy) - mid) + mid) / k).clamp(0.0, len);
    let d = (2.0 * ly - k * (lx * lx + ly * ly)) / (1.0 + q);
    let [fx, fy] = local_point(k, u);
    (u, d, (lx - fx) * (lx - fx) + (ly - fy) * (ly - fy))
}

fn frenet(road: &[Segment], seg: usize, u: f32, d: f32) -> Frenet {
    let g = &road[seg];
    Frenet {
        s: g[5] + u,
        d,
        heading: g[2] + g[3] * u,
        curvature: g[3],
        seg,
    }
}

/// Projects `p` on the road, searching only the segments next to `hint`
/// (the previous answer): a car moves less than a segment per step
/// (generated pieces are at least [`MIN_PIECE`] long).
pub fn project_near(road: &[Segment], closed: bool, hint: usize, p: [f32; 2]) -> Frenet {
    let n = road.len() as i64;
    let hint = (hint as i64).min(n - 1);
    let mut best = (f32::INFINITY, hint as usize, 0.0, 0.0);
    for k in [hint - 1, hint, hint + 1] {
        let k = match (closed, k) {
            (true, k) => k.rem_euclid(n),
            (false, k) if (0..n).contains(&k) => k,
            _ => continue,
        } as usize;
        let (u, d, dist) = project_segment(&road[k], p);
        if dist < best.0 {
            best = (dist, k, u, d);
        }
    }
    frenet(road, best.1, best.2, best.3)
}

/// Projects `p` on the whole road (episode starts).
pub fn project(road: &[Segment], p: [f32; 2]) -> Frenet {
    let mut best = (f32::INFINITY, 0, 0.0, 0.0);
    for (k, g) in road.iter().enumerate() {
        let (u, d, dist) = project_segment(g, p);
        if dist < best.0 {
            best = (dist, k, u, d);
        }
    }
    frenet(road, best.1, best.2, best.3)
}

/// The segment holding arc length `s` (wrapped on a closed track, clamped on an open road).
pub fn segment_at(road: &[Segment], length: f32, closed: bool, s: f32) -> (usize, f32) {
    let s = if closed {
        s.rem_euclid(length)
    } else {
        s.clamp(0.0, length)
    };
    let mut k = 0;
    while k + 1 < road.len() && s >= road[k + 1][5] {
        k += 1;
    }
    (k, (s - road[k][5]).min(road[k][4]))
}

/// The world point and heading at arc length `s`, offset `d` to the left.
pub fn pose_at(road: &[Segment], length: f32, closed: bool, s: f32, d: f32) -> ([f32; 2], f32) {
    let (k, u) = segment_at(road, length, closed, s);
    point_on(&road[k], u, d)
}

/// Curvature of the reference line at arc length `s`.
pub fn curvature_at(road: &[Segment], length: f32, closed: bool, s: f32) -> f32 {
    road[segment_at(road, length, closed, s).0][3]
}

/// The sharpest curvature (largest magnitude, with its sign) of the reference
/// line between arc lengths `from` and `to`, so a short corner between two
/// look-ahead points is never missed.
pub fn sharpest(road: &[Segment], length: f32, closed: bool, from: f32, to: f32) -> f32 {
    let (mut k, u) = segment_at(road, length, closed, from);
    let mut sharpest = road[k][3];
    // Metres of the window left after the current segment.
    let mut left = to - from - (road[k][4] - u);
    let mut visited = 1;
    while left > 0.0 && visited < road.len() {
        k += 1;
        if k == road.len() {
            if !closed {
                break;
            }
            k = 0;
        }
        if road[k][3].abs() > sharpest.abs() {
            sharpest = road[k][3];
        }
        left -= road[k][4];
        visited += 1;
    }
    sharpest
}

/// Builds the segments of a chain of `(curvature, length)` pieces starting at `(x, y, heading)`.
fn chain(
    start: [f32; 3],
    pieces: &[(f32, f32)],
    out: &mut [Segment; MAX_SEGMENTS],
) -> (usize, f32) {
    let (mut p, mut h, mut s) = ([start[0], start[1]], start[2], 0.0);
    for (k, &(kappa, len)) in pieces.iter().enumerate() {
        out[k] = [p[0], p[1], h, kappa, len, s];
        let (end, heading) = point_on(&out[k], len, 0.0);
        (p, h, s) = (end, wrap(heading), s + len);
    }
    (pieces.len(), s)
}

fn uniform(rng: &mut EnvRng, low: f32, high: f32) -> f32 {
    low + (high - low) * rng.random::<f32>()
}

/// A winding open road: a straight start, then alternating arcs and straights
/// until `length` m, curvature at most `max_curvature` and turns at most 70°.
pub fn winding(
    rng: &mut EnvRng,
    length: f32,
    max_curvature: f32,
    out: &mut [Segment; MAX_SEGMENTS],
) -> (usize, f32) {
    let mut pieces = [(0.0f32, 0.0f32); MAX_SEGMENTS];
    let mut total = 0.0;
    let mut n = 0;
    let per_piece = length / (MAX_SEGMENTS - 1) as f32;
    while n < MAX_SEGMENTS && total < length {
        let last = n == MAX_SEGMENTS - 1;
        let piece = if n % 2 == 0 || max_curvature == 0.0 {
            (0.0, uniform(rng, 0.5, 1.0) * per_piece)
        } else {
            let k = uniform(rng, 0.2, 1.0) * max_curvature;
            let k = if rng.random::<bool>() { k } else { -k };
            let turn = uniform(rng, 15f32.to_radians(), 70f32.to_radians());
            (k, (turn / k.abs()).min(1.5 * per_piece))
        };
        let len = if last {
            (length - total).max(piece.1)
        } else {
            piece.1
        };
        pieces[n] = (piece.0, len);
        total += len;
        n += 1;
    }
    chain([0.0, 0.0, 0.0], &pieces[..n], out)
}

/// A closed race track: a star-shaped polygon of `corners` vertices around a
/// circle of `radius` m, each corner rounded by an arc (radius 12–40 m), laid
/// out counter-clockwise; tracks whose parts come closer than `clearance` m are redrawn.
pub fn race_track(
    rng: &mut EnvRng,
    corners: usize,
    radius: f32,
    clearance: f32,
    out: &mut [Segment; MAX_SEGMENTS],
) -> (usize, f32) {
    let corners = corners.clamp(3, MAX_SEGMENTS / 2);
    let mut attempt = 0;
    loop {
        // A regular polygon always fits: after many redraws, stop jittering.
        let jitter = if attempt < 200 { 1.0 } else { 0.0 };
        attempt += 1;
        let mut v = [[0.0f32; 2]; MAX_SEGMENTS / 2];
        let offset = uniform(rng, 0.0, TAU);
        for (k, p) in v.iter_mut().enumerate().take(corners) {
            let a = offset + TAU * (k as f32 + jitter * uniform(rng, -0.25, 0.25)) / corners as f32;
            let r = radius * (1.0 + jitter * uniform(rng, -0.35, 0.3));
            *p = [r * a.cos(), r * a.sin()];
        }
        let edge = |k: usize| {
            let (a, b) = (v[k % corners], v[(k + 1) % corners]);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            (dy.atan2(dx), dx.hypot(dy))
        };
        let mut fillet = [0.0f32; MAX_SEGMENTS / 2];
        let mut turn = [0.0f32; MAX_SEGMENTS / 2];
        for k in 0..corners {
            turn[k] = wrap(edge(k).0 - edge(k + corners - 1).0);
            // Gentle corners get wide arcs, so no arc is shorter than MIN_PIECE.
            fillet[k] = uniform(rng, 12.0, 40.0).max(2.0 * MIN_PIECE / turn[k].abs().max(1e-3));
        }
        // Shrink the fillets until each edge keeps a straight of at least MIN_PIECE.
        let tangent = |k: usize, rho: f32| rho * (0.5 * turn[k]).abs().tan();
        for k in 0..corners {
            let (_, len) = edge(k);
            let next = (k + 1) % corners;
            let need = tangent(k, fillet[k]) + tangent(next, fillet[next]) + MIN_PIECE;
            if need > len {
                let scale = (len - MIN_PIECE).max(0.0) / (need - MIN_PIECE);
                fillet[k] *= scale;
                fillet[next] *= scale;
            }
        }
        if (0..corners).any(|k| fillet[k] < 10.0 || fillet[k] * turn[k].abs() < MIN_PIECE) {
            continue;
        }
        let mut pieces = [(0.0f32, 0.0f32); MAX_SEGMENTS];
        for k in 0..corners {
            let rho = fillet[k];
            pieces[2 * k] = (turn[k].signum() / rho, rho * turn[k].abs());
            let next = (k + 1) % corners;
            let straight = edge(k).1 - tangent(k, rho) - tangent(next, fillet[next]);
            pieces[2 * k + 1] = (0.0, straight);
        }
        let (h_in, _) = edge(corners - 1);
        let t0 = tangent(0, fillet[0]);
        let start = [v[0][0] - t0 * h_in.cos(), v[0][1] - t0 * h_in.sin(), h_in];
        let (n, length) = chain(start, &pieces[..2 * corners], out);
        if clears(&out[..n], length, clearance) {
            return (n, length);
        }
    }
}

/// True when points of the track more than 3 clearances apart along it are at
/// least `clearance` m apart in the plane (no crossing, no touching parts).
fn clears(road: &[Segment], length: f32, clearance: f32) -> bool {
    const SAMPLES: usize = 96;
    let mut pts = [[0.0f32; 2]; SAMPLES];
    for (i, p) in pts.iter_mut().enumerate() {
        *p = pose_at(road, length, true, length * i as f32 / SAMPLES as f32, 0.0).0;
    }
    let step = length / SAMPLES as f32;
    for i in 0..SAMPLES {
        for j in i + 1..SAMPLES {
            let along = ((j - i) as f32 * step).min(length - (j - i) as f32 * step);
            let (dx, dy) = (pts[i][0] - pts[j][0], pts[i][1] - pts[j][1]);
            if along > 3.0 * clearance && dx.hypot(dy) < clearance {
                return false;
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use proprio_core::episode_rng;
    use std::f32::consts::FRAC_PI_2;

    fn close(a: f32, b: f32, tol: f32) -> bool {
        (a - b).abs() < tol
    }

    #[test]
    fn queries_on_a_straight_match_hand_geometry() {
        // A straight from (10, 5) heading 90° (along +y), 100 m, starting at s = 40.
        let road = [[10.0, 5.0, FRAC_PI_2, 0.0, 100.0, 40.0]];
        let f = project(&road, [7.0, 35.0]);
        assert!(close(f.s, 70.0, 1e-4) && close(f.d, 3.0, 1e-4), "{f:?}");
        assert!(close(f.heading, FRAC_PI_2, 1e-6) && f.curvature == 0.0);
        let (p, h) = pose_at(&road, 140.0, false, 70.0, 3.0);
        assert!(close(p[0], 7.0, 1e-4) && close(p[1], 35.0, 1e-4) && close(h, FRAC_PI_2, 1e-6));
    }

    #[test]
    fn queries_on_arcs_match_hand_geometry() {
        // A left turn of radius 50 m from the origin heading +x: centre (0, 50).
        let left = [[0.0, 0.0, 0.0, 1.0 / 50.0, 100.0, 0.0]];
        // 3 m inside the arc (to its left), 0.5 rad round.
        let p = [47.0 * 0.5f32.sin(), 50.0 - 47.0 * 0.5f32.cos()];
        let f = project(&left, p);
        assert!(
            close(f.s, 25.0, 1e-3) && close(f.d, 3.0, 1e-3) && close(f.heading, 0.5, 1e-5),
            "{f:?}"
        );
        // A right turn of radius 20 m: centre (0, -20); a point 2 m outside (left of it).
        let right = [[0.0, 0.0, 0.0, -1.0 / 20.0, 60.0, 0.0]];
        let p = [22.0 * 1.2f32.sin(), -20.0 + 22.0 * 1.2f32.cos()];
        let f = project(&right, p);
        assert!(
            close(f.s, 24.0, 1e-3) && close(f.d, 2.0, 1e-3) && close(f.heading, -1.2, 1e-5),
            "{f:?}"
        );
        let (q, _) = pose_at(&right, 60.0, false, 24.0, 2.0);
        assert!(close(q[0], p[0], 1e-3) && close(q[1], p[1], 1e-3));
    }

    #[test]
    fn an_arc_of_more_than_half_a_turn_resolves_its_far_end() {
        // 300° of a radius-10 left turn: the far end is closer in angle to the start the other way round.
        let arc = [[0.0, 0.0, 0.0, 0.1, 10.0 * 300f32.to_radians(), 0.0]];
        let (p, _) = point_on(&arc[0], 10.0 * 280f32.to_radians(), 0.0);
        let f = project(&arc, p);
        assert!(close(f.s, 10.0 * 280f32.to_radians(), 1e-3), "{f:?}");
    }

    #[test]
    fn the_near_search_follows_a_car_along_a_winding_road() {
        let mut rng = episode_rng(3, 0, 0);
        let mut segs = [[0.0; 6]; MAX_SEGMENTS];
        let (n, length) = winding(&mut rng, 1500.0, 1.0 / 60.0, &mut segs);
        let road = &segs[..n];
        assert!(length >= 1500.0);
        let mut hint = 0;
        let mut s = 0.0;
        while s < length {
            let (p, h) = pose_at(road, length, false, s, 1.5);
            let f = project_near(road, false, hint, p);
            assert!(
                close(f.s, s, 1e-2) && close(f.d, 1.5, 1e-3),
                "at {s}: {f:?}"
            );
            assert!(close(wrap(f.heading - h), 0.0, 1e-4));
            hint = f.seg;
            s += 3.0;
        }
    }

    #[test]
    fn race_tracks_close_on_themselves_and_keep_their_parts_apart() {
        for seed in 0..40 {
            let mut rng = episode_rng(seed, 0, 0);
            let mut segs = [[0.0; 6]; MAX_SEGMENTS];
            let (n, length) = race_track(&mut rng, 8, 90.0, 14.0, &mut segs);
            let road = &segs[..n];
            let (end, heading) = point_on(&road[n - 1], road[n - 1][4], 0.0);
            assert!(
                close(end[0], road[0][0], 0.05) && close(end[1], road[0][1], 0.05),
                "seed {seed}: gap at the start line"
            );
            assert!(close(wrap(heading - road[0][2]), 0.0, 1e-3));
            let turning: f32 = road.iter().map(|g| g[3] * g[4]).sum();
            assert!(
                close(turning, TAU, 1e-3),
                "seed {seed}: turns {turning} rad in a lap"
            );
            assert!(clears(road, length, 14.0));
            // Across the start line, arc length wraps.
            let p = pose_at(road, length, true, 1.0, 0.0).0;
            let f = project_near(road, true, n - 1, p);
            assert!(close(f.s, 1.0, 1e-2) && f.seg == 0, "{f:?}");
            assert!(
                road.iter().all(|g| g[4] >= MIN_PIECE),
                "seed {seed}: a piece under {MIN_PIECE} m"
            );
        }
    }

    #[test]
    fn sharpest_curvature_finds_a_short_corner_inside_a_window() {
        let road = [
            [0.0, 0.0, 0.0, 0.0, 20.0, 0.0],
            [20.0, 0.0, 0.0, 0.1, 5.0, 20.0],
            [0.0, 0.0, 0.0, -0.02, 100.0, 25.0],
        ];
        assert_eq!(sharpest(&road, 125.0, false, 0.0, 19.0), 0.0);
        assert_eq!(sharpest(&road, 125.0, false, 10.0, 40.0), 0.1);
        assert_eq!(sharpest(&road, 125.0, false, 26.0, 200.0), -0.02);
    }

    #[test]
    fn wrap_keeps_angles_in_the_half_open_interval() {
        for (a, w) in [
            (PI, PI),
            (-PI, PI),
            (3.0 * PI, PI),
            (0.5, 0.5),
            (-7.0, -7.0 + TAU),
        ] {
            assert!(close(wrap(a), w, 1e-5), "wrap({a}) = {}", wrap(a));
        }
    }
}
