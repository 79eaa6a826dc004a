//! The texts of the registry's errors, as a user of `--cc` sees them: the parser and its error type live in
//! `mpquic-types`, and these pin that the controller's wording ("algorithm") survives the move.

use mpquic_cc::registry::build;

fn error(spec: &str) -> String {
    build(spec).err().map(|e| e.to_string()).unwrap_or_default()
}

#[test]
fn malformed_specifications() {
    assert_eq!(
        error(""),
        "malformed specification ``: empty algorithm name; expected `name` or `name:key=value,...`"
    );
    assert_eq!(
        error("cubic:beta"),
        "malformed specification `cubic:beta`: parameter without `=`; expected `name` or `name:key=value,...`"
    );
}

#[test]
fn unknown_names_and_parameters() {
    assert!(error("cubik").starts_with("unknown congestion controller `cubik`; valid names: newreno, cubic"));
    assert_eq!(
        error("cubic:typo=1"),
        "`cubic` has no parameter `typo`; valid parameters: c, beta, fast_convergence, max_window"
    );
}

#[test]
fn values_out_of_range() {
    // CUBIC's beta is accepted in [0.05, 0.95].
    assert_eq!(
        error("cubic:beta=2"),
        "`cubic`: bad value `2` for `beta`: expected a number in [0.05, 0.95]"
    );
    // A check across two parameters (Vegas: alpha ≤ beta) reports the same way.
    assert_eq!(
        error("vegas:alpha=5,beta=3"),
        "`vegas`: bad value `3` for `beta`: expected a number not below alpha (5)"
    );
    assert!(build("cubic:beta=0.5").is_ok());
}
