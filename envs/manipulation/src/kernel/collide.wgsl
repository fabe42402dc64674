// The kernel physics on the GPU, part 2 of 4: contact generation (box–box
// with clipping, box–plane, sphere–box, sphere–plane) — kernel/collide.rs
// line for line.

struct Obb {
    centre: vec3<f32>,
    axes: mat3x3<f32>,
    half: vec3<f32>,
}

fn corner(b: Obb, i: u32) -> vec3<f32> {
    let sx = select(-1.0, 1.0, (i & 1u) != 0u);
    let sy = select(-1.0, 1.0, (i & 2u) != 0u);
    let sz = select(-1.0, 1.0, (i & 4u) != 0u);
    return b.centre + b.axes[0] * (sx * b.half.x) + b.axes[1] * (sy * b.half.y) + b.axes[2] * (sz * b.half.z);
}

fn radius(b: Obb) -> f32 {
    return length(b.half);
}

// Points of the last pair test: up to 8 (box–plane corners) or 4 (box–box slots).
var<private> pt_valid: array<bool, 8>;
var<private> pt_at: array<vec3<f32>, 8>;
var<private> pt_normal: array<vec3<f32>, 8>;
var<private> pt_depth: array<f32, 8>;

fn clear_points() {
    for (var i = 0u; i < 8u; i++) {
        pt_valid[i] = false;
    }
}

fn set_point(i: u32, at: vec3<f32>, normal: vec3<f32>, depth: f32) {
    pt_valid[i] = true;
    pt_at[i] = at;
    pt_normal[i] = normal;
    pt_depth[i] = depth;
}

// The contact margin of two shapes (bounding radii ra, rb) moving with
// centre velocities la, lb and angular velocities wa, wb (collide.rs `margin`).
fn margin_of(la: vec3<f32>, wa: vec3<f32>, ra: f32, lb: vec3<f32>, wb: vec3<f32>, rb: f32, h: f32) -> f32 {
    return MARGIN + h * (length(la - lb) + length(wa) * ra + length(wb) * rb);
}

// Corners within MARGIN of the table or reaching it within h, moving with
// centre velocity lin and angular velocity ang.
fn box_plane(b: Obb, lin: vec3<f32>, ang: vec3<f32>, h: f32) {
    clear_points();
    if (b.centre.z - radius(b) > MARGIN + h * (length(lin) + length(ang) * radius(b))) {
        return;
    }
    for (var i = 0u; i < 8u; i++) {
        let c = corner(b, i);
        let fall = h * min((lin + cross(ang, c - b.centre)).z, 0.0);
        if (c.z + fall < MARGIN && abs(c.x) <= TABLE_X && abs(c.y) <= TABLE_Y) {
            set_point(i, c, vec3<f32>(0.0, 0.0, 1.0), -c.z);
        }
    }
}

// One point in slot 0, or none.
fn sphere_plane(centre: vec3<f32>, r: f32, margin: f32) {
    clear_points();
    let depth = r - centre.z;
    if (depth > -margin && abs(centre.x) <= TABLE_X && abs(centre.y) <= TABLE_Y) {
        set_point(0u, centre - vec3<f32>(0.0, 0.0, 1.0) * r, vec3<f32>(0.0, 0.0, 1.0), depth);
    }
}

fn sphere_box(centre: vec3<f32>, r: f32, b: Obb, margin: f32) {
    clear_points();
    let d = centre - b.centre;
    let reach = r + radius(b) + margin;
    if (dot(d, d) > reach * reach) {
        return;
    }
    let local = transpose(b.axes) * d;
    let clamped = clamp(local, -b.half, b.half);
    if (all(clamped == local)) {
        let gaps = b.half - abs(local);
        var i = 2u;
        if (gaps.x <= gaps.y && gaps.x <= gaps.z) {
            i = 0u;
        } else if (gaps.y <= gaps.z) {
            i = 1u;
        }
        let sgn = select(-1.0, 1.0, local[i] >= 0.0);
        let normal = b.axes[i] * sgn;
        set_point(0u, centre - normal * r, normal, gaps[i] + r);
        return;
    }
    let closest = b.centre + b.axes * clamped;
    let offset = centre - closest;
    let dist = length(offset);
    let depth = r - dist;
    if (depth > -margin) {
        set_point(0u, closest, offset / dist, depth);
    }
}

var<private> poly: array<vec3<f32>, 8>;
var<private> poly_n: u32;

// Clips `poly` to side · p[axis] ≤ limit.
fn clip(axis: u32, side: f32, limit: f32) {
    var out: array<vec3<f32>, 8>;
    var m = 0u;
    for (var i = 0u; i < poly_n; i++) {
        let a = poly[i];
        let b = poly[(i + 1u) % poly_n];
        let da = side * a[axis] - limit;
        let db = side * b[axis] - limit;
        if (da <= 0.0 && m < 8u) {
            out[m] = a;
            m++;
        }
        if ((da < 0.0) != (db < 0.0) && m < 8u) {
            let t = da / (da - db);
            out[m] = vec3<f32>(a.x + t * (b.x - a.x), a.y + t * (b.y - a.y), a.z + t * (b.z - a.z));
            m++;
        }
    }
    poly = out;
    poly_n = m;
}

fn overlap(a: Obb, b: Obb, d: vec3<f32>, axis: vec3<f32>) -> f32 {
    let ra = a.half.x * abs(dot(a.axes[0], axis)) + a.half.y * abs(dot(a.axes[1], axis)) + a.half.z * abs(dot(a.axes[2], axis));
    let rb = b.half.x * abs(dot(b.axes[0], axis)) + b.half.y * abs(dot(b.axes[1], axis)) + b.half.z * abs(dot(b.axes[2], axis));
    return ra + rb - abs(dot(d, axis));
}

fn edge_point(a: Obb, b: Obb, i: u32, j: u32, normal: vec3<f32>, depth: f32) {
    var pa = a.centre;
    var pb = b.centre;
    for (var k = 0u; k < 3u; k++) {
        if (k != i) {
            pa += a.axes[k] * (select(-1.0, 1.0, dot(a.axes[k], -normal) > 0.0) * a.half[k]);
        }
        if (k != j) {
            pb += b.axes[k] * (select(-1.0, 1.0, dot(b.axes[k], normal) > 0.0) * b.half[k]);
        }
    }
    let da = a.axes[i];
    let db = b.axes[j];
    let r = pa - pb;
    let aa = dot(da, da);
    let ab = dot(da, db);
    let bb = dot(db, db);
    let ar = dot(da, r);
    let br = dot(db, r);
    let den = aa * bb - ab * ab;
    var s = 0.0;
    var t = 0.0;
    if (abs(den) >= 1e-9) {
        s = (ab * br - bb * ar) / den;
        t = (aa * br - ab * ar) / den;
    }
    s = clamp(s, -a.half[i], a.half[i]);
    t = clamp(t, -b.half[j], b.half[j]);
    set_point(0u, ((pa + da * s) + (pb + db * t)) * 0.5, normal, depth);
}

// Box a against box b: up to 4 points in slots 0–3, normals from b to a.
fn box_box(a: Obb, b: Obb, margin: f32) {
    clear_points();
    let d = a.centre - b.centre;
    let reach = radius(a) + radius(b) + margin;
    if (dot(d, d) > reach * reach) {
        return;
    }
    var best = 1e30;
    var best_face = 0u;
    for (var face = 0u; face < 6u; face++) {
        var axis = b.axes[face % 3u];
        if (face < 3u) {
            axis = a.axes[face];
        }
        let o = overlap(a, b, d, axis);
        if (o < -margin) {
            return;
        }
        if (o < best) {
            best = o;
            best_face = face;
        }
    }
    var edge = 1e30;
    var edge_axis = vec3<f32>(0.0);
    var edge_i = 0u;
    var edge_j = 0u;
    for (var i = 0u; i < 3u; i++) {
        for (var j = 0u; j < 3u; j++) {
            let axis = cross(a.axes[i], b.axes[j]);
            let len = length(axis);
            if (len < 1e-3) {
                continue;
            }
            let o = overlap(a, b, d, axis / len);
            if (o < -margin) {
                return;
            }
            if (o < edge) {
                edge = o;
                edge_axis = axis / len;
                edge_i = i;
                edge_j = j;
            }
        }
    }
    if (edge + 1e-3 < best) {
        var normal = edge_axis;
        if (dot(d, edge_axis) < 0.0) {
            normal = -edge_axis;
        }
        edge_point(a, b, edge_i, edge_j, normal, edge);
        return;
    }
    var refb = b;
    var inc = a;
    var axis = best_face - 3u;
    var flip = false;
    if (best_face < 3u) {
        refb = a;
        inc = b;
        axis = best_face;
        flip = true;
    }
    var n = refb.axes[axis];
    if (dot(n, inc.centre - refb.centre) < 0.0) {
        n = -n;
    }
    var inc_axis = 0u;
    var most = 0.0;
    for (var i = 0u; i < 3u; i++) {
        let c = abs(dot(inc.axes[i], n));
        if (c > most) {
            most = c;
            inc_axis = i;
        }
    }
    var inc_n = inc.axes[inc_axis];
    if (dot(inc.axes[inc_axis], n) > 0.0) {
        inc_n = -inc.axes[inc_axis];
    }
    let inc_centre = inc.centre + inc_n * inc.half[inc_axis];
    let u_i = (inc_axis + 1u) % 3u;
    let v_i = (inc_axis + 2u) % 3u;
    let u_r = (axis + 1u) % 3u;
    let v_r = (axis + 2u) % 3u;
    let ru = refb.axes[u_r];
    let rv = refb.axes[v_r];
    let face_centre = refb.centre + n * refb.half[axis];
    let signs = array<vec2<f32>, 4>(vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0), vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0));
    for (var k = 0u; k < 4u; k++) {
        let p = inc_centre + inc.axes[u_i] * (signs[k].x * inc.half[u_i]) + inc.axes[v_i] * (signs[k].y * inc.half[v_i]);
        let rel = p - face_centre;
        poly[k] = vec3<f32>(dot(rel, ru), dot(rel, rv), dot(rel, n));
    }
    poly_n = 4u;
    let limits = vec2<f32>(refb.half[u_r], refb.half[v_r]);
    for (var e = 0u; e < 4u; e++) {
        clip(e / 2u, select(-1.0, 1.0, e % 2u == 0u), limits[e / 2u]);
    }
    var pick = array<u32, 4>(99u, 99u, 99u, 99u);
    let roles = array<vec2<f32>, 4>(vec2<f32>(0.0, 1.0), vec2<f32>(0.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(1.0, -1.0));
    for (var slot = 0u; slot < 4u; slot++) {
        let k = u32(roles[slot].x);
        let side = roles[slot].y;
        var best_v = -1e30;
        for (var i = 0u; i < poly_n; i++) {
            let depth = -poly[i].z;
            var taken = false;
            for (var e = 0u; e < slot; e++) {
                taken = taken || pick[e] == i;
            }
            if (depth <= -margin || taken) {
                continue;
            }
            if (side * poly[i][k] > best_v + 1e-6) {
                best_v = side * poly[i][k];
                pick[slot] = i;
            }
        }
    }
    var normal = n;
    if (flip) {
        normal = -n;
    }
    for (var slot = 0u; slot < 4u; slot++) {
        let i = pick[slot];
        if (i == 99u) {
            continue;
        }
        let p = poly[i];
        set_point(slot, face_centre + ru * p.x + rv * p.y + n * (p.z * 0.5), normal, -p.z);
    }
}

fn cube_box(i: u32) -> Obb {
    let c = F_CUBES + i * CUBE_FIELDS;
    let rot = vec4<f32>(s[c + 3u], s[c + 4u], s[c + 5u], s[c + 6u]);
    return Obb(vec3<f32>(s[c], s[c + 1u], s[c + 2u]), qmat(rot), vec3<f32>(CUBE_HALF));
}

// Robot box r (hand, fingers) at the kinematics now.
fn robot_box(r: u32) -> Obb {
    let at = A_BOX + 11u * r;
    let body = u32(P.arm[at]);
    let centre = k_org[body] + qrot(k_rot[body], arm3(at + 1u));
    return Obb(centre, qmat(qmul(k_rot[body], arm4(at + 4u))), arm3(at + 8u));
}
