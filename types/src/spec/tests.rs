//! The parser and the typed getters, on a controller's and on a scheduler's specification.

use super::*;

#[test]
fn parses_controller_name_and_parameters() {
    let s = Spec::parse(" CCubic : variant=a2, large_bdp_packets = 100 ", "algorithm").unwrap();
    assert_eq!(s.name, "ccubic");
    assert_eq!(
        s.params,
        vec![
            ("variant".into(), "a2".into()),
            ("large_bdp_packets".into(), "100".into())
        ]
    );
    assert_eq!(Spec::parse("cubic", "algorithm").unwrap().params, vec![]);
}

#[test]
fn parses_scheduler_name_and_parameters() {
    let s = Spec::parse(" Weighted : 1=3, 2 = 1 ", "scheduler").unwrap();
    assert_eq!(s.name, "weighted");
    assert_eq!(s.params, vec![("1".into(), "3".into()), ("2".into(), "1".into())]);
    assert_eq!(Spec::parse("minrtt", "scheduler").unwrap().params, vec![]);
}

#[test]
fn rejects_malformed_controller_specs() {
    assert!(matches!(
        Spec::parse("", "algorithm"),
        Err(SpecError::Syntax { .. })
    ));
    assert!(matches!(
        Spec::parse("cubic:beta", "algorithm"),
        Err(SpecError::Syntax { .. })
    ));
    assert!(matches!(
        Spec::parse("cubic:=1", "algorithm"),
        Err(SpecError::Syntax { .. })
    ));
    assert!(matches!(
        Spec::parse("cubic:a=1,a=2", "algorithm"),
        Err(SpecError::Syntax { .. })
    ));
}

#[test]
fn rejects_malformed_scheduler_specs() {
    assert!(matches!(
        Spec::parse("", "scheduler"),
        Err(SpecError::Syntax { .. })
    ));
    assert!(matches!(
        Spec::parse("blest:lambda", "scheduler"),
        Err(SpecError::Syntax { .. })
    ));
    assert!(matches!(
        Spec::parse("blest:=1", "scheduler"),
        Err(SpecError::Syntax { .. })
    ));
    assert!(matches!(
        Spec::parse("x:a=1,a=2", "scheduler"),
        Err(SpecError::Syntax { .. })
    ));
}

#[test]
fn syntax_errors_name_the_subject_and_the_fault() {
    // The texts the two registries have always printed.
    assert_eq!(
        Spec::parse(" :a=1", "algorithm").unwrap_err().to_string(),
        "malformed specification ` :a=1`: empty algorithm name; expected `name` or `name:key=value,...`"
    );
    assert_eq!(
        Spec::parse("", "scheduler").unwrap_err().to_string(),
        "malformed specification ``: empty scheduler name; expected `name` or `name:key=value,...`"
    );
    let reason = |s| match Spec::parse(s, "scheduler") {
        Err(SpecError::Syntax { reason, .. }) => Some(reason),
        _ => None,
    };
    assert_eq!(reason("x:a"), Some(SyntaxReason::MissingEquals));
    assert_eq!(reason("x: =1"), Some(SyntaxReason::EmptyKey));
    assert_eq!(reason("x:A=1,a=2"), Some(SyntaxReason::Repeated));
    assert_eq!(reason("x:,,a=1,"), None);
}

#[test]
fn typed_getters_check_ranges_and_leftovers() {
    let s = Spec::parse("x:beta=0.7,n=3,on=yes,mode=A,t=2.5", "algorithm").unwrap();
    let mut p = Params::new("x", s.params);
    assert_eq!(p.f64("beta", 0.5, 0.0, 1.0).unwrap(), 0.7);
    assert_eq!(p.u64("n", 1, 1, 10).unwrap(), 3);
    assert!(p.bool("on", false).unwrap());
    assert_eq!(p.choice("mode", "b", &["a", "b"]).unwrap(), "a");
    assert_eq!(
        p.millis("t", Duration::ZERO, Duration::ZERO, Duration::from_secs(1))
            .unwrap(),
        Duration::from_micros(2500)
    );
    assert_eq!(p.f64("absent", 0.25, 0.0, 1.0).unwrap(), 0.25);
    p.finish(&["beta"]).unwrap();

    let mut p = Params::new("x", Spec::parse("x:beta=2", "algorithm").unwrap().params);
    assert!(matches!(
        p.f64("beta", 0.5, 0.0, 1.0),
        Err(SpecError::BadValue { .. })
    ));
    let p = Params::new("x", Spec::parse("x:typo=2", "algorithm").unwrap().params);
    let err = p.finish(&["beta", "c"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`x` has no parameter `typo`; valid parameters: beta, c"
    );
}

#[test]
fn per_path_getter_checks_ranges_and_repeats() {
    let s = Spec::parse("x:lambda=1.2,n=3,on=yes,1=4,7=2", "scheduler").unwrap();
    let mut p = Params::new("x", s.params);
    assert_eq!(p.f64("lambda", 1.0, 1.0, 1.3).unwrap(), 1.2);
    assert_eq!(p.u64("n", 1, 1, 10).unwrap(), 3);
    assert!(p.bool("on", false).unwrap());
    assert_eq!(p.per_path(0, 10).unwrap(), vec![(PathId(1), 4), (PathId(7), 2)]);
    p.finish(&["lambda"]).unwrap();

    let mut p = Params::new("x", Spec::parse("x:lambda=2", "scheduler").unwrap().params);
    assert!(matches!(
        p.f64("lambda", 1.2, 1.0, 1.3),
        Err(SpecError::BadValue { .. })
    ));
    let mut p = Params::new("x", Spec::parse("x:1=-3", "scheduler").unwrap().params);
    assert!(matches!(p.per_path(0, 10), Err(SpecError::BadValue { .. })));
    let mut p = Params::new("x", Spec::parse("x:1=3,01=2", "scheduler").unwrap().params);
    assert!(matches!(p.per_path(0, 10), Err(SpecError::BadValue { .. })));
    let p = Params::new("x", Spec::parse("x:typo=2", "scheduler").unwrap().params);
    let err = p.finish(&["lambda", "adapt"]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "`x` has no parameter `typo`; valid parameters: lambda, adapt"
    );
}
