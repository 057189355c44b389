use super::*;

fn args() -> NetArgs {
    NetArgs {
        max_connections: None,
        max_connections_per_peer: 256,
        handshake_timeout_ms: 10_000,
        idle_timeout_ms: 60_000,
        http2_keepalive_interval_ms: 30_000,
        http2_keepalive_timeout_ms: 10_000,
        hello_timeout_ms: 10_000,
        max_pending_hello: 4096,
        max_pending_hello_per_peer: 1024,
        max_auth_failures: 10,
        auth_failure_window_secs: 60,
    }
}

#[test]
fn the_default_bound_follows_the_open_file_limit() {
    let limits = args().limits(512).unwrap();
    assert_eq!(limits.max_connections, 512 - RESERVED_FDS as usize);
    assert_eq!(limits.max_connections_per_peer, 256);
    let limits = args().limits(200).unwrap();
    assert_eq!(limits.max_connections, 72);
    assert_eq!(limits.max_connections_per_peer, 72);
    let limits = args().limits(1 << 20).unwrap();
    assert_eq!(limits.max_connections, DEFAULT_MAX_CONNECTIONS_CAP);
    assert!(NetLimits::default().validate().is_ok());
}

#[test]
fn a_bound_the_open_file_limit_cannot_carry_is_refused() {
    let mut a = args();
    a.max_connections = Some(5000);
    let error = a.limits(512).unwrap_err();
    assert_eq!(
        error,
        NetLimitsError::OverFdLimit {
            value: 5000,
            fd_limit: 512,
            most: 384
        }
    );
    let text = error.to_string();
    assert!(text.contains("--max-connections 5000"), "{text}");
    assert!(text.contains("at most 384"), "{text}");
    assert!(text.contains("limit of 512"), "{text}");
    a.max_connections = Some(384);
    assert!(a.limits(512).is_ok());
    let error = args().limits(100).unwrap_err();
    assert_eq!(error, NetLimitsError::FdLimitTooLow { fd_limit: 100 });
    assert!(error.to_string().contains("at least 129"), "{error}");
}

#[test]
fn every_bound_names_its_flag_value_and_range() {
    type Case = (fn(&mut NetArgs), &'static str);
    let cases: [Case; 11] = [
        (
            |a| a.max_connections = Some(0),
            "--max-connections = 0 is out of range: it must be 1..=1048576",
        ),
        (
            |a| a.max_connections_per_peer = 0,
            "--max-connections-per-peer = 0 is out of range: it must be 1..=384",
        ),
        (
            |a| a.max_connections_per_peer = 385,
            "--max-connections-per-peer = 385 is out of range: it must be 1..=384",
        ),
        (
            |a| a.handshake_timeout_ms = 50,
            "--handshake-timeout-ms = 50 is out of range: it must be 100..=60000",
        ),
        (
            |a| a.handshake_timeout_ms = 60_001,
            "--handshake-timeout-ms = 60001 is out of range: it must be 100..=60000",
        ),
        (
            |a| a.http2_keepalive_interval_ms = 99,
            "--http2-keepalive-interval-ms = 99 is out of range: it must be 100..=3600000",
        ),
        (
            |a| a.http2_keepalive_timeout_ms = 600_001,
            "--http2-keepalive-timeout-ms = 600001 is out of range: it must be 100..=600000",
        ),
        (
            |a| a.hello_timeout_ms = 60_001,
            "--hello-timeout-ms = 60001 is out of range: it must be 100..=60000",
        ),
        (
            |a| a.max_pending_hello_per_peer = 5000,
            "--max-pending-hello-per-peer = 5000 is out of range: it must be 1..=4096",
        ),
        (
            |a| a.max_auth_failures = 0,
            "--max-auth-failures = 0 is out of range: it must be 1..=10000",
        ),
        (
            |a| a.auth_failure_window_secs = 0,
            "--auth-failure-window-secs = 0 is out of range: it must be 1..=86400",
        ),
    ];
    for (change, expected) in cases {
        let mut a = args();
        if expected.starts_with("--max-connections-per-peer") {
            a.max_connections = Some(384);
        }
        change(&mut a);
        let error = a.limits(512).unwrap_err();
        assert_eq!(error.to_string(), expected);
    }
    let mut a = args();
    a.max_pending_hello = 0;
    a.max_pending_hello_per_peer = 0;
    assert_eq!(
        a.limits(512).unwrap_err().to_string(),
        "--max-pending-hello = 0 is out of range: it must be 1..=1048576"
    );
    let mut a = args();
    a.idle_timeout_ms = 40_000;
    assert_eq!(
        a.limits(512).unwrap_err().to_string(),
        "--idle-timeout-ms 40000 is too short: it must exceed --http2-keepalive-interval-ms plus --http2-keepalive-timeout-ms (40000), or bots waiting for a match would be closed"
    );
    a.idle_timeout_ms = 40_001;
    a.handshake_timeout_ms = 40_001;
    assert!(a.limits(512).is_ok());
}
