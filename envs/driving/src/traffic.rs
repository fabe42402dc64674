//! Other cars: IDM car following and MOBIL lane changes (as highway-env),
//! stepped on the road's Frenet frame together with the ego, and collisions
//! between oriented boxes.

use crate::params::{
    IDM_ACC, IDM_ACC_LIMIT, IDM_BRAKE, IDM_DELTA, IDM_MIN_GAP, IDM_TIME_GAP, LANE_CHANGE_SPEED,
    LANE_WIDTH, LENGTH, MOBIL_DELAY, MOBIL_POLITENESS, MOBIL_SAFE_BRAKE, MOBIL_THRESHOLD, WIDTH,
};
use crate::road;
use crate::state::{Car, MAX_OTHERS};

/// Field indices of an [`crate::state::Other`].
pub mod field {
    /// World x, m.
    pub const X: usize = 0;
    /// World y, m.
    pub const Y: usize = 1;
    /// Heading, rad.
    pub const YAW: usize = 2;
    /// Speed, m/s.
    pub const SPEED: usize = 3;
    /// Arc length along the road, m.
    pub const S: usize = 4;
    /// Lateral offset, m (left positive).
    pub const D: usize = 5;
    /// IDM's desired speed, m/s.
    pub const DESIRED: usize = 6;
    /// The lateral offset steered to, m.
    pub const TARGET_D: usize = 7;
    /// Seconds until the next lane-change decision.
    pub const TIMER: usize = 8;
}
use field::*;

/// Desired speed the ego is assumed to have when traffic judges a lane change's safety, m/s.
pub const EGO_DESIRED: f32 = 30.0;

/// The lane (0 = rightmost) holding lateral offset `d` on a road of `lanes` lanes.
pub fn lane_of(d: f32, lanes: f32) -> f32 {
    ((d / LANE_WIDTH + 0.5 * lanes).floor()).clamp(0.0, lanes - 1.0)
}

/// Lateral offset of the centre of lane `lane`.
pub fn lane_centre(lane: f32, lanes: f32) -> f32 {
    (lane + 0.5 - 0.5 * lanes) * LANE_WIDTH
}

/// IDM: the acceleration of a car at speed `v` wanting `desired`, behind a
/// leader `gap` m ahead (centre to centre) at speed `lead_v`, or on a free road.
pub fn idm(v: f32, desired: f32, leader: Option<(f32, f32)>) -> f32 {
    let mut a = IDM_ACC * (1.0 - (v.max(0.0) / desired.max(0.1)).powi(IDM_DELTA));
    if let Some((gap, lead_v)) = leader {
        let wanted = IDM_MIN_GAP
            + v * IDM_TIME_GAP
            + v * (v - lead_v) / (2.0 * (IDM_ACC * IDM_BRAKE).sqrt());
        a -= IDM_ACC * (wanted.max(0.0) / gap.max(0.1)).powi(2);
    }
    a.clamp(-IDM_ACC_LIMIT, IDM_ACC_LIMIT)
}

/// A road user as traffic sees it: along-road position, lanes it occupies, speed, desired speed.
#[derive(Debug, Clone, Copy)]
struct User {
    s: f32,
    lane: f32,
    target_lane: f32,
    v: f32,
    desired: f32,
}

/// The users of one episode: the other cars, then the ego (index `n`), and
/// their order along the road (by arc length, then index), so a car's leader
/// is found by walking forward from it rather than by scanning everyone.
struct Users {
    list: [User; MAX_OTHERS + 1],
    n: usize,
    order: [usize; MAX_OTHERS + 1],
    rank: [usize; MAX_OTHERS + 1],
}

impl Users {
    fn new(c: &Car, ego: (f32, f32, f32)) -> Self {
        let none = User {
            s: f32::NEG_INFINITY,
            lane: -1.0,
            target_lane: -1.0,
            v: 0.0,
            desired: 1.0,
        };
        let mut list = [none; MAX_OTHERS + 1];
        let n = c.others().len();
        for (u, o) in list.iter_mut().zip(c.others()) {
            *u = User {
                s: o[S],
                lane: lane_of(o[D], c.lanes),
                target_lane: lane_of(o[TARGET_D], c.lanes),
                v: o[SPEED],
                desired: o[DESIRED],
            };
        }
        let (s, d, v) = ego;
        let lane = lane_of(d, c.lanes);
        list[n] = User {
            s,
            lane,
            target_lane: lane,
            v,
            desired: EGO_DESIRED,
        };
        let mut order = [0; MAX_OTHERS + 1];
        for k in 0..=n {
            let mut i = k;
            while i > 0 && list[order[i - 1]].s > list[k].s {
                order[i] = order[i - 1];
                i -= 1;
            }
            order[i] = k;
        }
        let mut rank = [0; MAX_OTHERS + 1];
        for (i, &k) in order.iter().enumerate().take(n + 1) {
            rank[k] = i;
        }
        Self {
            list,
            n,
            order,
            rank,
        }
    }

    fn in_lane(&self, k: usize, lane: f32) -> bool {
        let u = &self.list[k];
        u.lane == lane || u.target_lane == lane
    }

    /// The nearest user ahead of user `k` (behind it, with `ahead` false)
    /// in `lane`: the next one in that direction along the road order, where
    /// users at the same arc length are ordered by index.
    fn nearest(&self, k: usize, lane: f32, ahead: bool) -> Option<usize> {
        let rank = self.rank[k];
        if ahead {
            self.order[rank + 1..=self.n]
                .iter()
                .copied()
                .find(|&j| self.in_lane(j, lane))
        } else {
            self.order[..rank]
                .iter()
                .rev()
                .copied()
                .find(|&j| self.in_lane(j, lane))
        }
    }

    /// IDM acceleration of user `k` behind user `lead` (or on a free road).
    fn accel(&self, k: usize, lead: Option<usize>) -> f32 {
        let u = &self.list[k];
        idm(
            u.v,
            u.desired,
            lead.map(|l| (self.list[l].s - u.s, self.list[l].v)),
        )
    }

    /// MOBIL: does car `k` gain by moving to `lane`, without making its new follower brake hard?
    fn mobil(&self, k: usize, lane: f32, current: f32) -> bool {
        let u = &self.list[k];
        let new_lead = self.nearest(k, lane, true);
        let new_follower = self.nearest(k, lane, false);
        let mut gain = self.accel(k, new_lead) - self.accel(k, self.nearest(k, current, true));
        if let Some(f) = new_follower {
            let after = idm(
                self.list[f].v,
                self.list[f].desired,
                Some((u.s - self.list[f].s, u.v)),
            );
            if after < -MOBIL_SAFE_BRAKE {
                return false;
            }
            gain += MOBIL_POLITENESS * (after - self.accel(f, new_lead));
        }
        if let Some(o) = self.nearest(k, current, false) {
            let before = self.accel(o, Some(k));
            let after = self.accel(o, self.nearest(k, current, true));
            gain += MOBIL_POLITENESS * (after - before);
        }
        gain > MOBIL_THRESHOLD
    }
}

/// Moves the other cars through one control step of `substeps × dt` s:
/// accelerations and lane changes decided at its start (the ego at `(s, d,
/// v)` counts as a road user), then integrated, and their poses updated.
pub fn step(c: &mut Car, ego: (f32, f32, f32), substeps: u32, dt: f32) {
    let users = Users::new(c, ego);
    let n = users.n;
    let mut accel = [0.0f32; MAX_OTHERS];
    let lanes = c.lanes;
    for (k, (a, o)) in accel
        .iter_mut()
        .zip(c.others.iter_mut())
        .enumerate()
        .take(n)
    {
        let u = users.list[k];
        *a = users.accel(k, users.nearest(k, u.lane, true));
        if u.target_lane != u.lane {
            *a = a.min(users.accel(k, users.nearest(k, u.target_lane, true)));
        }
        o[TIMER] -= substeps as f32 * dt;
        let settled = (o[D] - o[TARGET_D]).abs() < 0.05;
        if o[TIMER] <= 0.0 && settled {
            o[TIMER] += MOBIL_DELAY;
            for side in [1.0, -1.0] {
                let lane = u.lane + side;
                if (0.0..lanes).contains(&lane) && users.mobil(k, lane, u.lane) {
                    o[TARGET_D] = lane_centre(lane, lanes);
                    break;
                }
            }
        }
    }
    let (segs, length, closed) = (c.segments, c.road_length, c.closed > 0.5);
    let road = &segs[..c.num_segments as usize];
    let time = substeps as f32 * dt;
    for (o, a) in c.others[..n].iter_mut().zip(accel) {
        let v0 = o[SPEED];
        let v1 = (v0 + a * time).max(0.0);
        o[SPEED] = v1;
        o[S] = (o[S] + 0.5 * (v0 + v1) * time).min(length);
        let lateral =
            (o[TARGET_D] - o[D]).clamp(-LANE_CHANGE_SPEED * time, LANE_CHANGE_SPEED * time);
        o[D] += lateral;
        let (p, heading) = road::pose_at(road, length, closed, o[S], o[D]);
        o[X] = p[0];
        o[Y] = p[1];
        o[YAW] = heading + (lateral / time).atan2(v1.max(1.0));
    }
}

/// Do two oriented rectangles overlap (separating-axis test)? Each is
/// `(centre, yaw, half length, half width)`.
pub fn boxes_overlap(a: ([f32; 2], f32, f32, f32), b: ([f32; 2], f32, f32, f32)) -> bool {
    let (dx, dy) = (b.0[0] - a.0[0], b.0[1] - a.0[1]);
    let reach = a.2.hypot(a.3) + b.2.hypot(b.3);
    if dx * dx + dy * dy > reach * reach {
        return false;
    }
    let (sa, ca) = a.1.sin_cos();
    let (sb, cb) = b.1.sin_cos();
    let axes = [[ca, sa], [-sa, ca], [cb, sb], [-sb, cb]];
    axes.iter().all(|ax| {
        let project = |yaw_c: f32, yaw_s: f32, hl: f32, hw: f32| {
            hl * (ax[0] * yaw_c + ax[1] * yaw_s).abs() + hw * (-ax[0] * yaw_s + ax[1] * yaw_c).abs()
        };
        let dist = (dx * ax[0] + dy * ax[1]).abs();
        dist <= project(ca, sa, a.2, a.3) + project(cb, sb, b.2, b.3)
    })
}

/// The index of the first other car the ego's body overlaps, if any.
pub fn ego_collision(c: &Car) -> Option<usize> {
    let ego = (c.pos, c.yaw, 0.5 * LENGTH, 0.5 * WIDTH);
    c.others()
        .iter()
        .position(|o| boxes_overlap(ego, ([o[X], o[Y]], o[YAW], 0.5 * LENGTH, 0.5 * WIDTH)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytemuck::Zeroable;

    /// A straight road of `lanes` lanes with the ego parked far behind in lane 0.
    fn road(lanes: f32) -> Car {
        let mut c = Car::zeroed();
        c.segments[0] = [0.0, 0.0, 0.0, 0.0, 10_000.0, 0.0];
        c.num_segments = 1.0;
        c.road_length = 10_000.0;
        c.lanes = lanes;
        c
    }

    fn add(c: &mut Car, s: f32, lane: f32, v: f32, desired: f32) {
        let d = lane_centre(lane, c.lanes);
        let k = c.num_others as usize;
        c.others[k] = [s, d, 0.0, v, s, d, desired, d, 5.0];
        c.num_others += 1.0;
    }

    const EGO_FAR_BEHIND: (f32, f32, f32) = (-5000.0, -2.0, 0.0);

    #[test]
    fn idm_settles_at_its_equilibrium_gap() {
        let mut c = road(1.0);
        add(&mut c, 500.0, 0.0, 20.0, 20.0);
        add(&mut c, 400.0, 0.0, 25.0, 25.0);
        for _ in 0..1800 {
            step(&mut c, EGO_FAR_BEHIND, 10, 0.01);
        }
        let gap = c.others[0][S] - c.others[1][S];
        // s_e = (s0 + vT) / sqrt(1 - (v/v0)^δ) for a leader at v = 20 and v0 = 25.
        let expected =
            (IDM_MIN_GAP + 20.0 * IDM_TIME_GAP) / (1.0 - (20.0f32 / 25.0).powi(IDM_DELTA)).sqrt();
        assert!(
            (gap / expected - 1.0).abs() < 0.01,
            "gap {gap} m, IDM equilibrium {expected} m"
        );
        assert!((c.others[1][SPEED] - 20.0).abs() < 0.05);
    }

    #[test]
    fn a_free_car_cruises_at_its_desired_speed() {
        let mut c = road(1.0);
        add(&mut c, 0.0, 0.0, 10.0, 27.0);
        for _ in 0..600 {
            step(&mut c, EGO_FAR_BEHIND, 10, 0.01);
        }
        assert!(
            (c.others[0][SPEED] - 27.0).abs() < 0.2,
            "{}",
            c.others[0][SPEED]
        );
        assert_eq!(
            (c.others[0][X], c.others[0][Y]),
            (c.others[0][S], c.others[0][D])
        );
    }

    #[test]
    fn mobil_overtakes_a_slow_leader_when_the_next_lane_is_free() {
        let mut c = road(2.0);
        add(&mut c, 130.0, 0.0, 15.0, 15.0);
        add(&mut c, 100.0, 0.0, 25.0, 30.0);
        c.others[1][TIMER] = 0.0;
        for _ in 0..30 {
            step(&mut c, EGO_FAR_BEHIND, 10, 0.01);
        }
        assert_eq!(
            c.others[1][TARGET_D],
            lane_centre(1.0, 2.0),
            "the fast car moves left"
        );
        assert_eq!(
            c.others[0][TARGET_D],
            lane_centre(0.0, 2.0),
            "the slow free car stays"
        );
        assert!(c.others[1][D] > lane_centre(0.0, 2.0), "and is on its way");
    }

    #[test]
    fn mobil_refuses_a_change_that_makes_the_new_follower_brake_hard() {
        let mut c = road(2.0);
        add(&mut c, 130.0, 0.0, 15.0, 15.0);
        add(&mut c, 100.0, 0.0, 25.0, 30.0);
        // A fast car close behind in the left lane.
        add(&mut c, 92.0, 1.0, 30.0, 30.0);
        c.others[1][TIMER] = 0.0;
        step(&mut c, EGO_FAR_BEHIND, 10, 0.01);
        assert_eq!(c.others[1][TARGET_D], lane_centre(0.0, 2.0));
    }

    #[test]
    fn traffic_brakes_for_the_ego() {
        let mut c = road(1.0);
        add(&mut c, 0.0, 0.0, 25.0, 25.0);
        // The ego stands 40 m ahead in the same lane.
        step(&mut c, (40.0, lane_centre(0.0, 1.0), 0.0), 10, 0.01);
        assert!(
            c.others[0][SPEED] < 25.0 - 0.3,
            "speed {}",
            c.others[0][SPEED]
        );
    }

    /// The nearest user by a full scan: smallest gap, ties broken by the road order.
    fn scan(users: &Users, k: usize, lane: f32, ahead: bool) -> Option<usize> {
        let s = users.list[k].s;
        let mut best: Option<(f32, usize)> = None;
        for j in 0..=users.n {
            let gap = if ahead {
                users.list[j].s - s
            } else {
                s - users.list[j].s
            };
            let beyond = gap > 0.0 || (gap == 0.0 && (j > k) == ahead);
            let closer = best.is_none_or(|(g, _)| gap < g || (gap == g && !ahead));
            if j != k && users.in_lane(j, lane) && beyond && closer {
                best = Some((gap, j));
            }
        }
        best.map(|(_, j)| j)
    }

    #[test]
    fn neighbours_along_the_road_order_match_a_full_scan() {
        let mut rng = proprio_core::episode_rng(9, 0, 0);
        use proprio_core::rand::RngExt;
        for _ in 0..200 {
            let mut c = road(3.0);
            for _ in 0..MAX_OTHERS {
                // Coarse positions, so equal arc lengths (ties) occur.
                let s = (rng.random::<f32>() * 20.0).floor() * 5.0;
                let lane = (rng.random::<f32>() * 3.0).floor();
                add(&mut c, s, lane, 20.0, 25.0);
                let k = c.num_others as usize - 1;
                if rng.random::<f32>() < 0.3 {
                    c.others[k][TARGET_D] = lane_centre((lane + 1.0).min(2.0), 3.0);
                }
            }
            let ego = (
                (rng.random::<f32>() * 20.0).floor() * 5.0,
                lane_centre(1.0, 3.0),
                20.0,
            );
            let users = Users::new(&c, ego);
            for k in 0..=users.n {
                for lane in [0.0, 1.0, 2.0] {
                    for ahead in [true, false] {
                        let expected = scan(&users, k, lane, ahead);
                        assert_eq!(
                            users.nearest(k, lane, ahead),
                            expected,
                            "user {k}, lane {lane}, ahead {ahead}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn oriented_boxes_overlap_only_when_they_touch() {
        let car = |x: f32, y: f32, yaw: f32| ([x, y], yaw, 2.0, 1.0);
        assert!(boxes_overlap(car(0.0, 0.0, 0.0), car(3.9, 0.0, 0.0)));
        assert!(!boxes_overlap(car(0.0, 0.0, 0.0), car(4.1, 0.0, 0.0)));
        assert!(!boxes_overlap(car(0.0, 0.0, 0.0), car(0.0, 2.1, 0.0)));
        // Turned 90°, the other box reaches 2 m sideways: touching at 2.9 m, clear at 3.1 m.
        let q = std::f32::consts::FRAC_PI_2;
        assert!(boxes_overlap(car(0.0, 0.0, 0.0), car(2.9, 0.0, q)));
        assert!(!boxes_overlap(car(0.0, 0.0, 0.0), car(3.1, 0.0, q)));
        // Diagonal: corners clear although the bounding circles overlap.
        let e = std::f32::consts::FRAC_PI_4;
        assert!(!boxes_overlap(car(0.0, 0.0, e), car(3.0, -3.0, e)));
    }
}
