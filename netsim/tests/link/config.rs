//! Configuration: validation names the bad field; TOML round trips; setters validate.

use std::time::Duration;

use mpquic_netsim::link::{
    ConfigError, Impairments, JitterConfig, JitterDistribution, Link, LinkConfig, LossModel, QueueLimit,
};

use crate::common::*;

fn field_of(config: LinkConfig) -> &'static str {
    match Link::new(config, 0) {
        Err(ConfigError { field, .. }) => field,
        Ok(_) => "<accepted>",
    }
}

#[test]
fn validation_names_the_bad_field() {
    let base = || LinkConfig::new(RATE_8M, Duration::from_millis(10));
    let mut zero_rate = base();
    zero_rate.rate_bps = 0;
    assert_eq!(field_of(zero_rate), "rate_bps");
    assert_eq!(
        field_of(base().with_loss(LossModel::Bernoulli { p: 1.5 })),
        "loss.p"
    );
    assert_eq!(
        field_of(base().with_loss(LossModel::Bernoulli { p: f64::NAN })),
        "loss.p"
    );
    let ge = |p, r, k, h| base().with_loss(LossModel::GilbertElliott { p, r, k, h });
    assert_eq!(field_of(ge(0.1, -0.1, 1.0, 0.0)), "loss.r");
    assert_eq!(field_of(ge(0.1, 0.1, 1.1, 0.0)), "loss.k");
    assert_eq!(field_of(ge(0.1, 0.1, 1.0, 2.0)), "loss.h");
    assert_eq!(field_of(ge(0.0, 0.0, 1.0, 0.0)), "loss.r");
    assert_eq!(
        field_of(base().with_queue(QueueLimit::Bytes { bytes: 0 })),
        "queue.bytes"
    );
    assert_eq!(
        field_of(base().with_queue(QueueLimit::Packets { packets: 0 })),
        "queue.packets"
    );
    assert_eq!(
        field_of(base().with_queue(QueueLimit::Bdp {
            multiple: -1.0,
            base_rtt: None
        })),
        "queue.multiple"
    );
    assert_eq!(
        field_of(LinkConfig::new(RATE_8M, Duration::ZERO).with_queue(QueueLimit::default())),
        "queue.base_rtt"
    );
    assert_eq!(
        field_of(base().with_impairments(Impairments {
            corruption: 2.0,
            duplication: 0.0
        })),
        "impairments.corruption"
    );
    assert_eq!(
        field_of(base().with_impairments(Impairments {
            corruption: 0.0,
            duplication: -0.1
        })),
        "impairments.duplication"
    );
    assert_eq!(field_of(base()), "<accepted>");
    let err = Link::new(base().with_loss(LossModel::Bernoulli { p: 1.5 }), 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid link configuration: `loss.p` = 1.5: a probability in [0, 1]"
    );
}

#[test]
fn setters_validate_and_leave_the_link_unchanged_on_error() {
    let mut l = link(LinkConfig::new(RATE_8M, Duration::from_millis(10)));
    let before = l.config();
    assert_eq!(l.set_rate(ms(0), 0).unwrap_err().field, "rate_bps");
    assert_eq!(
        l.set_loss(ms(0), LossModel::Bernoulli { p: -1.0 })
            .unwrap_err()
            .field,
        "loss.p"
    );
    // The default queue is one BDP over twice the delay: a zero delay leaves it undefined.
    assert_eq!(
        l.set_delay(ms(0), Duration::ZERO).unwrap_err().field,
        "queue.base_rtt"
    );
    assert_eq!(
        l.set_queue_limit(ms(0), QueueLimit::Packets { packets: 0 })
            .unwrap_err()
            .field,
        "queue.packets"
    );
    let bad = Impairments {
        corruption: 0.0,
        duplication: 7.0,
    };
    assert_eq!(
        l.set_impairments(ms(0), bad).unwrap_err().field,
        "impairments.duplication"
    );
    assert_eq!(l.config(), before);
}

#[test]
fn toml_example_parses_with_defaults() {
    let config: LinkConfig = toml::from_str(
        r#"
        rate_bps = 100_000_000
        delay = "10ms"
        queue = { kind = "bdp", multiple = 1.0 }
        loss = { kind = "bernoulli", p = 0.001 }
        jitter = { distribution = { kind = "uniform", max = "2ms" }, allow_reordering = false }
        impairments = { corruption = 0.0, duplication = 0.0 }
        up = true
        "#,
    )
    .unwrap();
    let expected = LinkConfig::new(100_000_000, Duration::from_millis(10))
        .with_loss(LossModel::Bernoulli { p: 0.001 })
        .with_jitter(JitterConfig {
            distribution: JitterDistribution::Uniform {
                max: Duration::from_millis(2),
            },
            allow_reordering: false,
        });
    assert_eq!(config, expected);
    let minimal: LinkConfig = toml::from_str("rate_bps = 100_000_000\ndelay = \"10ms\"").unwrap();
    assert_eq!(minimal, LinkConfig::new(100_000_000, Duration::from_millis(10)));
    let ge: LossModel = toml::from_str("kind = \"gilbert_elliott\"\np = 0.01\nr = 0.3").unwrap();
    assert_eq!(
        ge,
        LossModel::GilbertElliott {
            p: 0.01,
            r: 0.3,
            k: 1.0,
            h: 0.0
        }
    );
}

#[test]
fn toml_round_trips() {
    let config = LinkConfig::new(5_000_000, Duration::from_micros(2500))
        .with_queue(QueueLimit::Bdp {
            multiple: 0.5,
            base_rtt: Some(Duration::from_millis(40)),
        })
        .with_loss(LossModel::GilbertElliott {
            p: 0.01,
            r: 0.3,
            k: 0.99,
            h: 0.1,
        })
        .with_jitter(JitterConfig {
            distribution: JitterDistribution::Normal {
                mean: Duration::from_millis(3),
                stddev: Duration::from_nanos(1500),
            },
            allow_reordering: true,
        })
        .with_impairments(Impairments {
            corruption: 0.001,
            duplication: 0.002,
        });
    let text = toml::to_string(&config).unwrap();
    assert_eq!(toml::from_str::<LinkConfig>(&text).unwrap(), config, "{text}");
}

#[test]
fn toml_rejects_unknown_fields_and_bad_durations() {
    assert!(toml::from_str::<LinkConfig>("rate_bps = 1\ndelay = \"1ms\"\nrate = 5").is_err());
    assert!(toml::from_str::<LinkConfig>("rate_bps = 1\ndelay = \"1 fortnight\"").is_err());
    assert!(
        toml::from_str::<LinkConfig>("rate_bps = 1\ndelay = \"1ms\"\nqueue = { kind = \"bytes\" }").is_err()
    );
    assert!(
        toml::from_str::<LinkConfig>(
            "rate_bps = 1\ndelay = \"1ms\"\nqueue = { kind = \"bytes\", bytes = 1, x = 2 }"
        )
        .is_err()
    );
}
