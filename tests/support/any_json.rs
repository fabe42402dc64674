//! A proptest strategy for any JSON value a user could hand us, extremes
//! included. Shared by the API and CLI property tests through `#[path]`.

use proptest::prelude::*;
use serde_json::Value;

/// Nulls, booleans, extreme integers and floats, short strings, and arrays
/// and objects of them, two levels deep.
pub fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        prop::num::f64::NORMAL.prop_map(Value::from),
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(1e300),
            Just(-1e300),
            Just(1e-300)
        ]
        .prop_map(Value::from),
        "[a-z_]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(2, 8, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z_]{1,8}", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}
