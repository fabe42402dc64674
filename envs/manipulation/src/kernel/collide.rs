//! Contact generation with a fixed number of points per pair: box–box by the
//! separating-axis test with the incident face clipped against the reference
//! face (up to 4 points), box–plane by corners, sphere–box and sphere–plane by
//! closest points. Every function is pure and loops over fixed bounds, as the
//! WGSL twin needs.
//!
//! Contacts are speculative: a pair gets points while its gap is under
//! [`MARGIN`] plus the distance the two shapes can close within the coming
//! step, so the solver stops a fast body at the surface in the step it
//! arrives instead of finding it deep inside the next step.

use glam::{Mat3, Vec3};

/// Pairs closer than this get speculative contacts even at rest (so resting contacts persist), m.
pub const MARGIN: f32 = 0.01;

/// How a shape moves over the coming step: its centre's velocity and its angular velocity.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Motion {
    /// Velocity of the shape's centre, m/s.
    pub linear: Vec3,
    /// Angular velocity, rad/s.
    pub angular: Vec3,
}

impl Motion {
    /// Velocity of the point at `r` from the centre.
    pub fn at(&self, r: Vec3) -> Vec3 {
        self.linear + self.angular.cross(r)
    }

    /// The farthest any point within `radius` of the centre can travel in `h` seconds.
    pub fn reach(&self, radius: f32, h: f32) -> f32 {
        h * (self.linear.length() + self.angular.length() * radius)
    }
}

/// The contact margin of two shapes (bounding radii `ra`, `rb`) moving as
/// `a` and `b`: [`MARGIN`] plus the most their gap can close in `h` seconds.
pub fn margin(a: &Motion, ra: f32, b: &Motion, rb: f32, h: f32) -> f32 {
    MARGIN
        + h * ((a.linear - b.linear).length() + a.angular.length() * ra + b.angular.length() * rb)
}

/// One contact point between two shapes: `normal` points from the second
/// shape to the first; `depth` > 0 is penetration, < 0 a gap.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// World position, m.
    pub at: Vec3,
    /// Unit normal, from the second shape to the first.
    pub normal: Vec3,
    /// Penetration depth, m (negative: separated).
    pub depth: f32,
}

/// An oriented box in the world.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Obb {
    /// Centre, m.
    pub centre: Vec3,
    /// Columns: the box's axes in the world.
    pub axes: Mat3,
    /// Half extents, m.
    pub half: Vec3,
}

impl Obb {
    /// Corner `i` (bit 0: +x, bit 1: +y, bit 2: +z).
    pub fn corner(&self, i: usize) -> Vec3 {
        let s = |bit: usize| if i & bit != 0 { 1.0 } else { -1.0 };
        self.centre
            + self.axes.x_axis * (s(1) * self.half.x)
            + self.axes.y_axis * (s(2) * self.half.y)
            + self.axes.z_axis * (s(4) * self.half.z)
    }

    /// Radius of the sphere around the box.
    pub fn radius(&self) -> f32 {
        self.half.length()
    }

    fn axis(&self, i: usize) -> Vec3 {
        self.axes.col(i)
    }
}

/// Box corners against the plane z = 0 within the table top's half extents:
/// one point per corner slot (`None` where the corner is clear of it) for
/// each corner within [`MARGIN`] of the plane or reaching it within `h`
/// seconds moving as `motion`.
pub fn box_plane(b: &Obb, table: Vec3, motion: &Motion, h: f32) -> [Option<Point>; 8] {
    let mut out = [None; 8];
    if b.centre.z - b.radius() > MARGIN + motion.reach(b.radius(), h) {
        return out;
    }
    for (i, slot) in out.iter_mut().enumerate() {
        let c = b.corner(i);
        let fall = h * motion.at(c - b.centre).z.min(0.0);
        if c.z + fall < MARGIN && c.x.abs() <= table.x && c.y.abs() <= table.y {
            *slot = Some(Point {
                at: c,
                normal: Vec3::Z,
                depth: -c.z,
            });
        }
    }
    out
}

/// A sphere against the plane z = 0 within the table top, when its gap is under `margin`.
pub fn sphere_plane(centre: Vec3, radius: f32, table: Vec3, margin: f32) -> Option<Point> {
    let depth = radius - centre.z;
    (depth > -margin && centre.x.abs() <= table.x && centre.y.abs() <= table.y).then(|| Point {
        at: centre - Vec3::Z * radius,
        normal: Vec3::Z,
        depth,
    })
}

/// A sphere against a box, when their gap is under `margin`: normal from the box to the sphere.
pub fn sphere_box(centre: Vec3, radius: f32, b: &Obb, margin: f32) -> Option<Point> {
    let d = centre - b.centre;
    if d.length_squared() > (radius + b.radius() + margin).powi(2) {
        return None;
    }
    let local = b.axes.transpose() * d;
    let clamped = local.clamp(-b.half, b.half);
    if clamped == local {
        // The centre is inside: push out through the nearest face.
        let gaps = b.half - local.abs();
        let i = if gaps.x <= gaps.y && gaps.x <= gaps.z {
            0
        } else if gaps.y <= gaps.z {
            1
        } else {
            2
        };
        let sign = if local[i] >= 0.0 { 1.0 } else { -1.0 };
        let normal = b.axis(i) * sign;
        return Some(Point {
            at: centre - normal * radius,
            normal,
            depth: gaps[i] + radius,
        });
    }
    let closest = b.centre + b.axes * clamped;
    let offset = centre - closest;
    let distance = offset.length();
    let depth = radius - distance;
    (depth > -margin).then(|| Point {
        at: closest,
        normal: offset / distance,
        depth,
    })
}

/// Clips polygon `poly` (`n` vertices, 2-D in the reference face frame) to `side · p[axis] ≤ limit`.
fn clip(
    poly: &[[f32; 3]; 8],
    n: usize,
    axis: usize,
    side: f32,
    limit: f32,
) -> ([[f32; 3]; 8], usize) {
    let mut out = [[0.0; 3]; 8];
    let mut m = 0;
    for i in 0..n {
        let a = poly[i];
        let b = poly[(i + 1) % n];
        let da = side * a[axis] - limit;
        let db = side * b[axis] - limit;
        if da <= 0.0 && m < 8 {
            out[m] = a;
            m += 1;
        }
        if (da < 0.0) != (db < 0.0) && m < 8 {
            let t = da / (da - db);
            out[m] = [0, 1, 2].map(|k| a[k] + t * (b[k] - a[k]));
            m += 1;
        }
    }
    (out, m)
}

/// Box `a` against box `b`, when their gap is under `margin`: up to 4 points
/// in fixed slots (the extremes of the contact patch along the reference
/// face's two axes), normals from `b` to `a`.
pub fn box_box(a: &Obb, b: &Obb, margin: f32) -> [Option<Point>; 4] {
    let mut out = [None; 4];
    let d = a.centre - b.centre;
    if d.length_squared() > (a.radius() + b.radius() + margin).powi(2) {
        return out;
    }
    // Separating-axis test: the axis of least penetration (faces preferred over edges).
    let overlap = |axis: Vec3| {
        let ra = (0..3)
            .map(|i| a.half[i] * a.axis(i).dot(axis).abs())
            .sum::<f32>();
        let rb = (0..3)
            .map(|i| b.half[i] * b.axis(i).dot(axis).abs())
            .sum::<f32>();
        ra + rb - d.dot(axis).abs()
    };
    let mut best = (f32::INFINITY, 0usize);
    for face in 0..6 {
        let axis = if face < 3 {
            a.axis(face)
        } else {
            b.axis(face - 3)
        };
        let o = overlap(axis);
        if o < -margin {
            return out;
        }
        if o < best.0 {
            best = (o, face);
        }
    }
    let mut edge = (f32::INFINITY, Vec3::ZERO, 0usize, 0usize);
    for i in 0..3 {
        for j in 0..3 {
            let axis = a.axis(i).cross(b.axis(j));
            let len = axis.length();
            if len < 1e-3 {
                continue;
            }
            let o = overlap(axis / len);
            if o < -margin {
                return out;
            }
            if o < edge.0 {
                edge = (o, axis / len, i, j);
            }
        }
    }
    if edge.0 + 1e-3 < best.0 {
        let normal = if d.dot(edge.1) < 0.0 { -edge.1 } else { edge.1 };
        out[0] = Some(edge_point(a, b, edge.2, edge.3, normal, edge.0));
        return out;
    }
    // Face contact: reference face on `refb`, the incident face of the other box clipped to it.
    let (refb, inc, axis, flip) = if best.1 < 3 {
        (a, b, best.1, true)
    } else {
        (b, a, best.1 - 3, false)
    };
    let towards = inc.centre - refb.centre;
    let mut n = refb.axis(axis);
    if n.dot(towards) < 0.0 {
        n = -n;
    }
    // The incident face: the other box's face most opposed to n.
    let mut inc_axis = 0;
    let mut most = 0.0;
    for i in 0..3 {
        let c = inc.axis(i).dot(n).abs();
        if c > most {
            most = c;
            inc_axis = i;
        }
    }
    let inc_n = if inc.axis(inc_axis).dot(n) > 0.0 {
        -inc.axis(inc_axis)
    } else {
        inc.axis(inc_axis)
    };
    let inc_centre = inc.centre + inc_n * inc.half[inc_axis];
    let (u_i, v_i) = ((inc_axis + 1) % 3, (inc_axis + 2) % 3);
    let (u_r, v_r) = ((axis + 1) % 3, (axis + 2) % 3);
    let (ru, rv) = (refb.axis(u_r), refb.axis(v_r));
    let face_centre = refb.centre + n * refb.half[axis];
    let mut poly = [[0.0; 3]; 8];
    for (k, (su, sv)) in [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
        .into_iter()
        .enumerate()
    {
        let p = inc_centre
            + inc.axis(u_i) * (su * inc.half[u_i])
            + inc.axis(v_i) * (sv * inc.half[v_i]);
        let rel = p - face_centre;
        poly[k] = [rel.dot(ru), rel.dot(rv), rel.dot(n)];
    }
    let mut count = 4;
    for (axis2, limit) in [(0, refb.half[u_r]), (1, refb.half[v_r])] {
        for side in [1.0, -1.0] {
            (poly, count) = clip(&poly, count, axis2, side, limit);
        }
    }
    // Slots: the points furthest along +u, −u, +v, −v (each taken once).
    let mut pick = [usize::MAX; 4];
    for (slot, (k, side)) in [(0, 1.0), (0, -1.0), (1, 1.0), (1, -1.0)]
        .into_iter()
        .enumerate()
    {
        let mut best_v = f32::NEG_INFINITY;
        for (i, p) in poly.iter().enumerate().take(count) {
            let depth = -p[2];
            if depth <= -margin || pick[..slot].contains(&i) {
                continue;
            }
            if side * p[k] > best_v + 1e-6 {
                best_v = side * p[k];
                pick[slot] = i;
            }
        }
    }
    let normal = if flip { -n } else { n };
    for (slot, &i) in pick.iter().enumerate() {
        if i == usize::MAX {
            continue;
        }
        let p = poly[i];
        let at = face_centre + ru * p[0] + rv * p[1] + n * (p[2] * 0.5);
        out[slot] = Some(Point {
            at,
            normal,
            depth: -p[2],
        });
    }
    out
}

/// The contact of an edge of `a` (axis `i`) with an edge of `b` (axis `j`).
fn edge_point(a: &Obb, b: &Obb, i: usize, j: usize, normal: Vec3, depth: f32) -> Point {
    // The edge of each box furthest along the normal towards the other.
    let support = |o: &Obb, dir: Vec3, skip: usize| {
        let mut p = o.centre;
        for k in 0..3 {
            if k != skip {
                let s = if o.axis(k).dot(dir) > 0.0 { 1.0 } else { -1.0 };
                p += o.axis(k) * (s * o.half[k]);
            }
        }
        p
    };
    let pa = support(a, -normal, i);
    let pb = support(b, normal, j);
    let (da, db) = (a.axis(i), b.axis(j));
    // Closest points of the two edge lines.
    let r = pa - pb;
    let (aa, ab, bb) = (da.dot(da), da.dot(db), db.dot(db));
    let (ar, br) = (da.dot(r), db.dot(r));
    let den = aa * bb - ab * ab;
    let (s, t) = if den.abs() < 1e-9 {
        (0.0, 0.0)
    } else {
        ((ab * br - bb * ar) / den, (aa * br - ab * ar) / den)
    };
    let s = s.clamp(-a.half[i], a.half[i]);
    let t = t.clamp(-b.half[j], b.half[j]);
    Point {
        at: ((pa + da * s) + (pb + db * t)) * 0.5,
        normal,
        depth,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    fn cube(centre: Vec3, rotation: Quat) -> Obb {
        Obb {
            centre,
            axes: Mat3::from_quat(rotation),
            half: Vec3::splat(0.02),
        }
    }

    #[test]
    fn a_cube_on_a_cube_touches_at_four_corners_of_the_overlap() {
        let b = cube(Vec3::new(0.0, 0.0, 0.02), Quat::IDENTITY);
        let a = cube(Vec3::new(0.01, 0.005, 0.0595), Quat::IDENTITY);
        let points = box_box(&a, &b, MARGIN);
        assert!(points.iter().all(Option::is_some), "{points:?}");
        for p in points.iter().flatten() {
            assert!(
                (p.normal - Vec3::Z).length() < 1e-5,
                "normal from b up to a: {p:?}"
            );
            assert!((p.depth - 0.0005).abs() < 1e-5, "{p:?}");
            assert!(
                p.at.x >= -0.01 - 1e-5 && p.at.x <= 0.02 + 1e-5,
                "inside the overlap: {p:?}"
            );
        }
        let xs: Vec<f32> = points.iter().flatten().map(|p| p.at.x).collect();
        assert!(
            xs.iter().any(|x| (x - 0.02).abs() < 1e-5)
                && xs.iter().any(|x| (x + 0.01).abs() < 1e-5)
        );
    }

    #[test]
    fn separated_boxes_have_no_contact_and_a_tilted_cube_rests_on_its_corners() {
        let b = cube(Vec3::ZERO, Quat::IDENTITY);
        assert!(
            box_box(&cube(Vec3::new(0.0, 0.0, 0.06), Quat::IDENTITY), &b, MARGIN)
                .iter()
                .all(Option::is_none)
        );
        let tilted = cube(Vec3::new(0.0, 0.0, 0.025), Quat::from_rotation_x(0.3));
        let on = box_plane(&tilted, Vec3::new(1.0, 1.0, 0.0), &Motion::default(), 0.01);
        let touching: Vec<_> = on.iter().flatten().filter(|p| p.depth > -1e-3).collect();
        assert_eq!(
            touching.len(),
            2,
            "one edge of a tilted cube touches: {on:?}"
        );
    }

    #[test]
    fn contacts_reach_as_far_as_the_bodies_close_within_the_step() {
        // A cube 13 mm above the table, falling at 2.45 m/s: 4 cm in a 60 Hz step.
        let falling = cube(Vec3::new(0.0, 0.0, 0.033), Quat::IDENTITY);
        let table = Vec3::new(1.0, 1.0, 0.0);
        let down = Motion {
            linear: Vec3::new(0.0, 0.0, -2.45),
            angular: Vec3::ZERO,
        };
        let h = 1.0 / 60.0;
        assert!(
            box_plane(&falling, table, &Motion::default(), h)
                .iter()
                .all(Option::is_none)
        );
        let points = box_plane(&falling, table, &down, h);
        assert_eq!(
            points.iter().flatten().count(),
            4,
            "the bottom corners: {points:?}"
        );
        assert!(
            points
                .iter()
                .flatten()
                .all(|p| (p.depth + 0.013).abs() < 1e-6)
        );
        // Rising at the same speed, it reaches nothing.
        let up = Motion {
            linear: -down.linear,
            angular: Vec3::ZERO,
        };
        assert!(
            box_plane(&falling, table, &up, h)
                .iter()
                .all(Option::is_none)
        );
        // Two cubes 3 cm apart closing at 2 m/s get points; at rest they do not.
        let a = cube(Vec3::new(0.07, 0.0, 0.02), Quat::IDENTITY);
        let b = cube(Vec3::new(0.0, 0.0, 0.02), Quat::IDENTITY);
        let still = Motion::default();
        let thrown = Motion {
            linear: Vec3::new(-2.0, 0.0, 0.0),
            angular: Vec3::ZERO,
        };
        assert!(
            box_box(&a, &b, margin(&still, 0.0, &still, 0.0, h))
                .iter()
                .all(Option::is_none)
        );
        let close = margin(&thrown, a.radius(), &still, b.radius(), h);
        assert!((close - (MARGIN + 2.0 * h)).abs() < 1e-6);
        let points = box_box(&a, &b, close);
        assert!(points.iter().flatten().count() >= 1, "{points:?}");
        assert!(
            points
                .iter()
                .flatten()
                .all(|p| (p.depth + 0.03).abs() < 1e-5 && p.normal.x > 0.99)
        );
    }
}
