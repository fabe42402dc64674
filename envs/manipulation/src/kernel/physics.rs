//! One physics step of the kernel: articulated arm and free cubes, joint drives,
//! joint position and speed limits and frictional contacts solved together by
//! projected Gauss–Seidel on impulses, warm-started from the last step's impulses.

use super::arm::{Arm, BOXES, DOF, Kinematics};
use super::collide::{self, Motion, Obb, Point};
use super::state::{CUBE_FIELDS, CUBES, Sim, slot};
use crate::panda::TOUCH;
use crate::panda::{CUBE_DENSITY, CUBE_HALF, GRIP_FRICTION, TABLE_FRICTION, TABLE_HALF};
use arrayvec::ArrayVec;
use glam::{Mat3, Quat, Vec3};

/// Solver iterations per step.
pub const ITERATIONS: usize = 8;
/// Share of the penetration beyond [`SLOP`] corrected per step (Baumgarte).
pub const BAUMGARTE: f32 = 0.2;
/// Penetration left uncorrected so that resting contacts stay in contact, m.
pub const SLOP: f32 = 0.0005;
/// Most contact points solved per env and step (the deepest are never dropped first: points come in a fixed order).
pub const MAX_CONTACTS: usize = 48;
/// Gravity, m/s².
pub const GRAVITY: f32 = 9.81;
/// No warm-start slot.
const NO_SLOT: usize = usize::MAX;

/// What a contact touches on one side.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Side {
    Fixed,
    Link(usize),
    Cube(usize),
}

/// One contact point's three rows (normal, two tangents).
#[derive(Clone, Copy)]
struct Row {
    dirs: [Vec3; 3],
    sides: [(Side, Vec3); 2],
    robot: bool,
    jr: [[f32; DOF]; 3],
    mjr: [[f32; DOF]; 3],
    inv_w: [f32; 3],
    bias: f32,
    mu: f32,
    lambda: [f32; 3],
    slot: usize,
}

/// Cube constants: mass and moment of inertia of a solid cube.
pub fn cube_mass() -> (f32, f32) {
    let edge = 2.0 * CUBE_HALF;
    let m = CUBE_DENSITY * edge * edge * edge;
    (m, m * edge * edge / 6.0)
}

/// The oriented box of cube `i`.
pub fn cube_box(sim: &Sim, i: usize) -> Obb {
    let c = &sim.cubes[i];
    Obb {
        centre: Vec3::new(c[0], c[1], c[2]),
        axes: Mat3::from_quat(Quat::from_xyzw(c[3], c[4], c[5], c[6])),
        half: Vec3::splat(CUBE_HALF),
    }
}

/// The oriented box of robot box `r` (hand, left finger, right finger).
pub fn robot_box(arm: &Arm, k: &Kinematics, r: usize) -> Obb {
    let b = &arm.boxes[r];
    Obb {
        centre: k.origin[b.body] + k.rotation[b.body] * b.centre,
        axes: Mat3::from_quat(k.rotation[b.body] * b.rotation),
        half: b.half,
    }
}

/// Two unit tangents of `n`, a continuous function of it.
fn tangents(n: Vec3) -> (Vec3, Vec3) {
    let t1 = if n.z.abs() < 0.9 {
        n.cross(Vec3::Z)
    } else {
        n.cross(Vec3::X)
    }
    .normalize();
    (t1, n.cross(t1))
}

/// The lower-triangular Cholesky factor of a symmetric positive-definite `a`
/// (pivots floored at 1e-12, so a degenerate matrix stays finite).
pub(crate) fn cholesky<const N: usize>(a: &[[f32; N]; N]) -> [[f32; N]; N] {
    let mut l = [[0.0f32; N]; N];
    for i in 0..N {
        for j in 0..=i {
            let mut sum = a[i][j];
            for k in 0..j {
                sum -= l[i][k] * l[j][k];
            }
            l[i][j] = if i == j {
                sum.max(1e-12).sqrt()
            } else {
                sum / l[j][j]
            };
        }
    }
    l
}

/// Solves `L Lᵀ x = b` with the factor `l`.
pub(crate) fn cholesky_solve<const N: usize>(l: &[[f32; N]; N], b: &[f32; N]) -> [f32; N] {
    let mut y = [0.0f32; N];
    for i in 0..N {
        let mut s = b[i];
        for k in 0..i {
            s -= l[i][k] * y[k];
        }
        y[i] = s / l[i][i];
    }
    let mut x = [0.0f32; N];
    for i in (0..N).rev() {
        let mut s = y[i];
        for k in i + 1..N {
            s -= l[k][i] * x[k];
        }
        x[i] = s / l[i][i];
    }
    x
}

/// `m⁻¹` of a symmetric positive-definite `m`, column by column.
fn inverse(m: &[[f32; DOF]; DOF]) -> [[f32; DOF]; DOF] {
    let l = cholesky(m);
    let mut inv = [[0.0f32; DOF]; DOF];
    for c in 0..DOF {
        let mut unit = [0.0f32; DOF];
        unit[c] = 1.0;
        let x = cholesky_solve(&l, &unit);
        for i in 0..DOF {
            inv[i][c] = x[i];
        }
    }
    inv
}

/// Velocities the solver changes.
struct Velocities {
    qd: [f32; DOF],
    v: [Vec3; CUBES],
    w: [Vec3; CUBES],
}

impl Row {
    fn velocity(&self, d: usize, vel: &Velocities) -> f32 {
        let mut v = 0.0;
        if self.robot {
            for j in 0..DOF {
                v += self.jr[d][j] * vel.qd[j];
            }
        }
        for (s, (side, r)) in self.sides.iter().enumerate() {
            if let Side::Cube(i) = *side {
                let sign = if s == 0 { 1.0 } else { -1.0 };
                v += sign * (self.dirs[d].dot(vel.v[i]) + r.cross(self.dirs[d]).dot(vel.w[i]));
            }
        }
        v
    }

    fn apply(&self, d: usize, impulse: f32, vel: &mut Velocities, cube: (f32, f32)) {
        if self.robot {
            for j in 0..DOF {
                vel.qd[j] += impulse * self.mjr[d][j];
            }
        }
        for (s, (side, r)) in self.sides.iter().enumerate() {
            if let Side::Cube(i) = *side {
                let sign = if s == 0 { impulse } else { -impulse };
                vel.v[i] += self.dirs[d] * (sign / cube.0);
                vel.w[i] += r.cross(self.dirs[d]) * (sign / cube.1);
            }
        }
    }
}

/// The contact points of one env, in a fixed order (points past [`MAX_CONTACTS`] are dropped).
struct Contacts(ArrayVec<Row, MAX_CONTACTS>);

impl Contacts {
    fn push(&mut self, a: Side, b: Side, p: &Point, slot: usize, h: f32) {
        let (t1, t2) = tangents(p.normal);
        let friction = |s: Side| match s {
            Side::Fixed => TABLE_FRICTION,
            _ => GRIP_FRICTION,
        };
        let bias = if p.depth > 0.0 {
            BAUMGARTE * (p.depth - SLOP).max(0.0) / h
        } else {
            p.depth / h
        };
        let _ = self.0.try_push(Row {
            dirs: [p.normal, t1, t2],
            sides: [(a, p.at), (b, p.at)],
            robot: false,
            jr: [[0.0; DOF]; 3],
            mjr: [[0.0; DOF]; 3],
            inv_w: [0.0; 3],
            bias,
            mu: 0.5 * (friction(a) + friction(b)),
            lambda: [0.0; 3],
            slot,
        });
    }
}

/// Advances `sim` by `h` seconds with `cubes` cubes in play, each pushed by a constant `force` (N).
pub fn step(arm: &Arm, sim: &mut Sim, cubes: usize, h: f32, force: &[Vec3; CUBES]) {
    let (cube_m, cube_i) = cube_mass();
    let k = arm.kinematics(&sim.q);
    let mut m = [[0.0; DOF]; DOF];
    arm.mass_matrix(&k, &mut m);
    let minv = inverse(&m);
    let bias = arm.bias(&k, &sim.qd);
    let mut vel = Velocities {
        qd: sim.qd,
        v: [Vec3::ZERO; CUBES],
        w: [Vec3::ZERO; CUBES],
    };
    for j in 0..DOF {
        for c in 0..DOF {
            vel.qd[j] -= h * minv[j][c] * bias[c];
        }
    }
    for i in 0..cubes {
        let c = &sim.cubes[i];
        vel.v[i] = Vec3::new(c[7], c[8], c[9] - h * GRAVITY) + force[i] * (h / cube_m);
        vel.w[i] = Vec3::new(c[10], c[11], c[12]);
    }
    let mut contacts = Contacts(ArrayVec::new());
    let grasp = detect(arm, &k, &vel, sim, cubes, h, &mut contacts);
    for (flag, held) in sim.grasp.iter_mut().zip(grasp) {
        *flag = f32::from(u8::from(held));
    }
    // Rows: Jacobians through the arm, effective masses, warm start.
    for row in contacts.0.iter_mut() {
        for (s, (side, r)) in row.sides.iter_mut().enumerate() {
            let sign = if s == 0 { 1.0 } else { -1.0 };
            match *side {
                Side::Link(b) => {
                    let at = *r;
                    row.robot = true;
                    for d in 0..3 {
                        for j in 0..DOF {
                            row.jr[d][j] +=
                                sign * arm.point_jacobian(&k, b, at, j).dot(row.dirs[d]);
                        }
                    }
                }
                Side::Cube(i) => *r -= Vec3::new(sim.cubes[i][0], sim.cubes[i][1], sim.cubes[i][2]),
                Side::Fixed => {}
            }
        }
        for d in 0..3 {
            let mut w = 0.0;
            if row.robot {
                for j in 0..DOF {
                    let mut s = 0.0;
                    for c in 0..DOF {
                        s += minv[j][c] * row.jr[d][c];
                    }
                    row.mjr[d][j] = s;
                    w += row.jr[d][j] * s;
                }
            }
            for (side, r) in &row.sides {
                if let Side::Cube(_) = side {
                    w += 1.0 / cube_m + r.cross(row.dirs[d]).length_squared() / cube_i;
                }
            }
            row.inv_w[d] = if w > 0.0 { 1.0 / w } else { 0.0 };
        }
        if row.slot != NO_SLOT {
            row.lambda = sim.contact_impulse[row.slot];
            for d in 0..3 {
                row.apply(d, row.lambda[d], &mut vel, (cube_m, cube_i));
            }
        }
    }
    // Joint drives: implicit PD as soft constraints, impulse capped at the effort
    // limit, the speed they head for capped at the joint's speed limit.
    let mut drive = [(0.0f32, 0.0f32, 0.0f32, 0.0f32); DOF];
    for j in 0..DOF {
        let (kp, kd) = arm.gains[j];
        let soft = h * (kd + h * kp);
        // Never past the speed limit, unless the effort cap binds first (a
        // finger's squeeze on a cube keeps its full force).
        let heading = arm.speed[j].max(arm.effort[j] / (kd + h * kp));
        let target = (kp * (sim.targets[j] - sim.q[j]) / (kd + h * kp)).clamp(-heading, heading);
        drive[j] = (
            soft,
            target,
            arm.effort[j] * h,
            1.0 / (1.0 + soft * minv[j][j]),
        );
        let warm = sim.drive_impulse[j].clamp(-drive[j].2, drive[j].2);
        sim.drive_impulse[j] = warm;
        for c in 0..DOF {
            vel.qd[c] += warm * minv[c][j];
        }
    }
    // Joint limits: one row per joint near its nearer limit; the joint may reach it within the step, not pass it.
    let mut limits = ArrayVec::<(usize, f32, f32, f32), DOF>::new();
    for j in 0..DOF {
        let (low, high) = arm.limits[j];
        let (sign, gap) = if sim.q[j] - low < high - sim.q[j] {
            (1.0, sim.q[j] - low)
        } else {
            (-1.0, high - sim.q[j])
        };
        if gap <= 0.2 {
            let floor = if gap >= 0.0 {
                -gap / h
            } else {
                -BAUMGARTE * gap / h
            };
            limits.push((j, sign, floor, 1.0 / minv[j][j]));
        }
    }
    let mut limit_impulse = [0.0f32; DOF];
    // Joint speeds: two rows per joint (−v_max ≤ q̇ and q̇ ≤ v_max), as PhysX articulations limit them.
    let mut speed_impulse = [[0.0f32; 2]; DOF];
    for _ in 0..ITERATIONS {
        for j in 0..DOF {
            let (soft, target, max, gain) = drive[j];
            let acc = sim.drive_impulse[j];
            let delta = (soft * (target - vel.qd[j]) - acc) * gain;
            let new = (acc + delta).clamp(-max, max);
            let applied = new - acc;
            sim.drive_impulse[j] = new;
            for c in 0..DOF {
                vel.qd[c] += applied * minv[c][j];
            }
        }
        for (l, &(j, sign, floor, mass)) in limits.iter().enumerate() {
            let acc = limit_impulse[l];
            let new = (acc + (floor - sign * vel.qd[j]) * mass).max(0.0);
            limit_impulse[l] = new;
            for c in 0..DOF {
                vel.qd[c] += sign * (new - acc) * minv[c][j];
            }
        }
        for row in contacts.0.iter_mut() {
            let vn = row.velocity(0, &vel);
            let new = (row.lambda[0] + (row.bias - vn) * row.inv_w[0]).max(0.0);
            row.apply(0, new - row.lambda[0], &mut vel, (cube_m, cube_i));
            row.lambda[0] = new;
            let limit = row.mu * new;
            let old = (row.lambda[1], row.lambda[2]);
            let mut t = [0.0; 2];
            for d in 1..3 {
                t[d - 1] = row.lambda[d] - row.velocity(d, &vel) * row.inv_w[d];
            }
            let len = (t[0] * t[0] + t[1] * t[1]).sqrt();
            if len > limit {
                let s = if len > 0.0 { limit / len } else { 0.0 };
                t = [t[0] * s, t[1] * s];
            }
            row.apply(1, t[0] - old.0, &mut vel, (cube_m, cube_i));
            row.apply(2, t[1] - old.1, &mut vel, (cube_m, cube_i));
            row.lambda[1] = t[0];
            row.lambda[2] = t[1];
        }
        for (j, impulses) in speed_impulse.iter_mut().enumerate() {
            for (acc, sign) in impulses.iter_mut().zip([1.0f32, -1.0]) {
                let new = (*acc - (arm.speed[j] + sign * vel.qd[j]) / minv[j][j]).max(0.0);
                if new != *acc {
                    for c in 0..DOF {
                        vel.qd[c] += sign * (new - *acc) * minv[c][j];
                    }
                    *acc = new;
                }
            }
        }
    }
    // Keep this step's impulses for the next; slots without a contact now forget theirs.
    sim.contact_impulse = [[0.0; 3]; super::state::SLOTS];
    for row in contacts.0.iter() {
        if row.slot != NO_SLOT {
            sim.contact_impulse[row.slot] = row.lambda;
        }
    }
    // Semi-implicit Euler: positions from the new velocities, each joint's
    // clamped to its limit where the iterations left it past (as PhysX does).
    for j in 0..DOF {
        sim.qd[j] = vel.qd[j].clamp(-arm.speed[j], arm.speed[j]);
        sim.q[j] += h * sim.qd[j];
    }
    for i in 0..cubes {
        let c: &mut [f32; CUBE_FIELDS] = &mut sim.cubes[i];
        let (v, w) = (vel.v[i], vel.w[i]);
        let rot = Quat::from_xyzw(c[3], c[4], c[5], c[6]);
        let spin = Quat::from_xyzw(w.x, w.y, w.z, 0.0) * rot;
        let rot = Quat::from_xyzw(
            rot.x + 0.5 * h * spin.x,
            rot.y + 0.5 * h * spin.y,
            rot.z + 0.5 * h * spin.z,
            rot.w + 0.5 * h * spin.w,
        )
        .normalize();
        *c = [
            c[0] + h * v.x,
            c[1] + h * v.y,
            c[2] + h * v.z,
            rot.x,
            rot.y,
            rot.z,
            rot.w,
            v.x,
            v.y,
            v.z,
            w.x,
            w.y,
            w.z,
        ];
    }
}

/// Every contact point of the env now, in a fixed order (boxes on the table:
/// the cubes, then the hand and fingers; box pairs: cube with cube, then each
/// robot box with each cube; the link spheres), and which cubes both fingers
/// touch (closer than [`TOUCH`]). Each pair's margin grows with how fast the
/// two close (velocities `vel` before the solve). One call site per shape
/// test, as the WGSL twin needs to compile fast.
fn detect(
    arm: &Arm,
    k: &Kinematics,
    vel: &Velocities,
    sim: &Sim,
    cubes: usize,
    h: f32,
    c: &mut Contacts,
) -> [bool; CUBES] {
    let table = Vec3::new(TABLE_HALF[0], TABLE_HALF[1], 0.0);
    let count = cubes + BOXES;
    let links = arm.motions(k, &vel.qd);
    let mut boxes = [cube_box(sim, 0); CUBES + BOXES];
    let mut sides = [Side::Fixed; CUBES + BOXES];
    let mut motions = [Motion::default(); CUBES + BOXES];
    for n in 0..count {
        (boxes[n], sides[n], motions[n]) = if n < cubes {
            let motion = Motion {
                linear: vel.v[n],
                angular: vel.w[n],
            };
            (cube_box(sim, n), Side::Cube(n), motion)
        } else {
            let b = robot_box(arm, k, n - cubes);
            let body = arm.boxes[n - cubes].body;
            let motion = Motion {
                linear: links[body].at(b.centre - k.origin[body]),
                angular: links[body].angular,
            };
            (b, Side::Link(body), motion)
        };
    }
    for n in 0..count {
        let points = collide::box_plane(&boxes[n], table, &motions[n], h);
        for (corner, p) in points.iter().enumerate() {
            if let Some(p) = p {
                let slot = if n < cubes {
                    slot::cube_table(n, corner)
                } else {
                    slot::box_table(n - cubes, corner)
                };
                c.push(sides[n], Side::Fixed, p, slot, h);
            }
        }
    }
    let mut touch = [[false; CUBES]; 2];
    for a in 0..count {
        for b in 0..cubes.min(a) {
            let (ra, rb) = (boxes[a].radius(), boxes[b].radius());
            let margin = collide::margin(&motions[a], ra, &motions[b], rb, h);
            let points = collide::box_box(&boxes[a], &boxes[b], margin);
            for (n, p) in points.iter().enumerate() {
                if let Some(p) = p {
                    let slot = if a < cubes {
                        slot::cube_cube(b, a, n)
                    } else {
                        slot::box_cube(a - cubes, b, n)
                    };
                    c.push(sides[a], sides[b], p, slot, h);
                    // Robot boxes 1 and 2 are the fingers.
                    if a > cubes && p.depth > -TOUCH {
                        touch[a - cubes - 1][b] = true;
                    }
                }
            }
        }
    }
    for s in arm.spheres.iter().take(arm.sphere_count) {
        let centre = k.origin[s.body] + k.rotation[s.body] * s.centre;
        let motion = Motion {
            linear: links[s.body].at(centre - k.origin[s.body]),
            angular: Vec3::ZERO,
        };
        let margin = collide::margin(&motion, 0.0, &Motion::default(), 0.0, h);
        if let Some(p) = collide::sphere_plane(centre, s.radius, table, margin) {
            c.push(Side::Link(s.body), Side::Fixed, &p, NO_SLOT, h);
        }
        for i in 0..cubes {
            let margin = collide::margin(&motion, 0.0, &motions[i], boxes[i].radius(), h);
            if let Some(p) = collide::sphere_box(centre, s.radius, &boxes[i], margin) {
                c.push(Side::Link(s.body), Side::Cube(i), &p, NO_SLOT, h);
            }
        }
    }
    std::array::from_fn(|i| touch[0][i] && touch[1][i])
}
