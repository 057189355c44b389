use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::transport::server::Connected;

use super::throttle::AUTH_BUCKETS_PRUNE_AT;
use super::*;

#[test]
fn ipv6_peers_count_by_their_64_prefix() {
    let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
    let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
    let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
    assert_eq!(peer_key(a), peer_key(b));
    assert_ne!(peer_key(a), peer_key(c));
    let mapped: IpAddr = "::ffff:10.0.0.1".parse().unwrap();
    assert_eq!(peer_key(mapped), IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)));
}

#[test]
fn the_counter_bounds_in_all_and_per_peer() {
    let counter = PeerCounter::new(3, 2);
    let one = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    let two = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
    let a = counter.acquire(one).unwrap();
    let _b = counter.acquire(one).unwrap();
    assert_eq!(
        counter.acquire(one).unwrap_err(),
        Over::Peer { open: 2, max: 2 }
    );
    let _c = counter.acquire(two).unwrap();
    assert_eq!(
        counter.acquire(two).unwrap_err(),
        Over::Total { open: 3, max: 3 }
    );
    drop(a);
    assert_eq!(counter.open(), 2);
    let _d = counter.acquire(one).unwrap();
    let text = Over::Peer { open: 2, max: 2 }.message("streams", one, "--a", "--b");
    assert!(
        text.contains("from 10.0.0.1") && text.contains("at most 2") && text.contains("--b"),
        "{text}"
    );
}

#[test]
fn failed_logins_are_throttled_per_peer_and_drain_over_the_window() {
    let throttle = AuthThrottle::new(3, Duration::from_secs(60));
    let peer = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    let other = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
    let t0 = std::time::Instant::now();
    for _ in 0..3 {
        assert!(throttle.check_at(peer, t0).is_ok());
        throttle.failed_at(peer, t0);
    }
    // Full: one failure drains in 20 s.
    let wait = throttle.check_at(peer, t0).unwrap_err();
    assert!((wait.as_secs_f64() - 20.0).abs() < 0.01, "{wait:?}");
    assert!(throttle.check_at(other, t0).is_ok());
    let t1 = t0 + Duration::from_secs(10);
    let wait = throttle.check_at(peer, t1).unwrap_err();
    assert!((wait.as_secs_f64() - 10.0).abs() < 0.01, "{wait:?}");
    let t2 = t0 + Duration::from_secs(20);
    assert!(throttle.check_at(peer, t2).is_ok());
    throttle.failed_at(peer, t2);
    assert!(throttle.check_at(peer, t2).is_err());
    // Drained buckets are swept; the map stays bounded.
    let many = AuthThrottle::new(1, Duration::from_secs(1));
    for i in 0..AUTH_BUCKETS_PRUNE_AT as u32 {
        many.failed_at(IpAddr::V4(Ipv4Addr::from(i)), t0);
    }
    assert_eq!(many.buckets.lock().unwrap().len(), AUTH_BUCKETS_PRUNE_AT);
    many.failed_at(peer, t0 + Duration::from_secs(5));
    assert_eq!(many.buckets.lock().unwrap().len(), 1);
    assert!(many.check_at(peer, t0 + Duration::from_secs(5)).is_err());
    let text = throttle.message(peer, Duration::from_secs(20));
    assert!(
        text.contains("try again in 20.0 s") && text.contains("at most 3 failures per 60 s"),
        "{text}"
    );
}

async fn arena_like(limits: NetLimits) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    use tokio_stream::StreamExt;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        let mut incoming = Box::pin(incoming(listener, &limits, NetMetrics::unregistered()));
        while let Some(Ok(mut io)) = incoming.next().await {
            assert_eq!(io.connect_info().remote_addr().unwrap().ip(), io.peer.ip());
            // An echo that stops at the first error (a timeout).
            tokio::spawn(async move {
                let mut buf = [0u8; 64];
                while let Ok(n) = io.read(&mut buf).await {
                    if n == 0 || io.write_all(&buf[..n]).await.is_err() {
                        break;
                    }
                }
            });
        }
    });
    (addr, task)
}

async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 64];
    loop {
        match tokio::time::timeout(within, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test]
async fn connections_over_the_bound_are_closed_at_once() {
    let limits = NetLimits {
        max_connections: 4,
        max_connections_per_peer: 2,
        ..NetLimits::default()
    };
    let (addr, task) = arena_like(limits).await;
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        s.read_exact(&mut buf).await.unwrap();
        held.push(s);
    }
    let mut third = TcpStream::connect(addr).await.unwrap();
    assert!(closed_within(&mut third, Duration::from_secs(10)).await);
    // The held ones are open.
    for s in &mut held {
        assert!(!closed_within(s, Duration::from_millis(100)).await);
    }
    drop(held.pop());
    // A slot is free again (the server sees the close asynchronously).
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"ping").await.unwrap();
        let mut buf = [0u8; 4];
        if tokio::time::timeout(Duration::from_secs(1), s.read_exact(&mut buf))
            .await
            .is_ok_and(|r| r.is_ok())
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the freed slot was never reused"
        );
    }
    task.abort();
}

#[tokio::test]
async fn silent_connections_are_closed_after_the_handshake_or_idle_timeout() {
    let limits = NetLimits {
        handshake_timeout: Duration::from_millis(200),
        idle_timeout: Duration::from_millis(600),
        keepalive_interval: Duration::from_millis(100),
        keepalive_timeout: Duration::from_millis(100),
        ..NetLimits::default()
    };
    let (addr, task) = arena_like(limits).await;
    // Nothing sent: closed after the handshake timeout.
    let started = std::time::Instant::now();
    let mut silent = TcpStream::connect(addr).await.unwrap();
    assert!(closed_within(&mut silent, Duration::from_secs(10)).await);
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(180), "{took:?}");
    // Fewer bytes than the preface: also closed after the handshake timeout.
    let mut trickle = TcpStream::connect(addr).await.unwrap();
    trickle.write_all(b"PRI * HTTP").await.unwrap();
    assert!(closed_within(&mut trickle, Duration::from_secs(10)).await);
    // A connection that keeps sending lives past both timeouts...
    let mut live = TcpStream::connect(addr).await.unwrap();
    live.write_all(&[b'x'; 24]).await.unwrap();
    let started = std::time::Instant::now();
    let mut buf = [0u8; 64];
    while started.elapsed() < Duration::from_millis(1500) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        live.write_all(b"ping").await.unwrap();
        let n = live.read(&mut buf).await.unwrap();
        assert!(n > 0, "a live connection was closed");
    }
    // ...and is closed once it falls silent.
    let silent_since = std::time::Instant::now();
    assert!(closed_within(&mut live, Duration::from_secs(10)).await);
    assert!(silent_since.elapsed() >= Duration::from_millis(400));
    task.abort();
}

#[test]
fn failed_logins_here_are_told_and_those_elsewhere_only_counted() {
    let throttle = AuthThrottle::new(3, Duration::from_secs(3600));
    let told = Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = told.clone();
    throttle.tell_failures(move |peer| record.lock().unwrap().push(peer));
    let peer = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    throttle.failed(peer);
    throttle.failed_elsewhere(peer);
    assert_eq!(
        *told.lock().unwrap(),
        [peer],
        "only the failure here is told"
    );
    assert!(throttle.check(peer).is_ok(), "2 of 3");
    throttle.failed_elsewhere(peer);
    assert!(
        throttle.check(peer).is_err(),
        "failures elsewhere count the same"
    );
}
