//! Empty: this crate only pins the features of the crates it depends on.
