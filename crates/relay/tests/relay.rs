//! The relay's promises, with a real TCP echo server behind it: the round trip it adds (at
//! least what was asked, at most 5 ms more), pipelined messages delayed together, and bytes
//! passed unchanged however large the message.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bookstore_relay::{EchoServer, Relay};

/// A relay in front of an echo server (kept running for the test's whole process).
fn relay(round_trip: Duration) -> Relay {
    let echo = Box::leak(Box::new(EchoServer::start().unwrap()));
    Relay::start("127.0.0.1:0".parse().unwrap(), echo.addr(), round_trip).unwrap()
}

fn connect(relay: &Relay) -> TcpStream {
    let stream = TcpStream::connect(relay.addr()).unwrap();
    stream.set_nodelay(true).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream
}

/// Round trips of one small message through `relay`, each measured alone.
fn round_trips(relay: &Relay, count: usize) -> Vec<Duration> {
    let mut stream = connect(relay);
    let mut answer = [0u8; 64];
    (0..count)
        .map(|n| {
            let message = [n as u8; 64];
            let sent = Instant::now();
            stream.write_all(&message).unwrap();
            stream.read_exact(&mut answer).unwrap();
            assert_eq!(answer, message);
            sent.elapsed()
        })
        .collect()
}

/// The tests measure time: one at a time, so none is timed while another copies 8 MiB.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[test]
fn every_round_trip_takes_at_least_the_target_and_typically_under_5_ms_more() {
    for target in [Duration::from_micros(250), Duration::from_millis(1), Duration::from_millis(20)]
    {
        let relay = relay(target);
        let samples = round_trips(&relay, 30);
        let shortest = *samples.iter().min().unwrap();
        assert!(shortest >= target, "{target:?}: a round trip took {shortest:?}");
        // The median, not the slowest: a test machine running other tests may stall any one
        // of them; the relay's own overhead is what is bounded here.
        let typical = median(samples);
        assert!(typical <= target + Duration::from_millis(5), "{target:?}: median {typical:?}");
    }
}

#[test]
fn messages_sent_back_to_back_arrive_one_delay_later_not_one_delay_each() {
    // 40 messages 2 ms apart through a 40 ms round trip: each comes back about 40 ms after
    // it was sent, while the ones after it are still on their way. A relay that waits out
    // a delay and then forwards whatever arrived meanwhile makes a message wait for the
    // delay in progress too: 40–80 ms each, about 60 at the median; one that delays each
    // chunk after the one before it, far more.
    let _serial = serial();
    let round_trip = Duration::from_millis(40);
    let relay = relay(round_trip);
    let mut stream = connect(&relay);
    let mut reader = stream.try_clone().unwrap();
    let count = 40;
    let collector = std::thread::spawn(move || {
        // When each message's answer was complete.
        (0..count)
            .map(|n| {
                let mut answer = [0u8; 100];
                reader.read_exact(&mut answer).unwrap();
                assert_eq!(answer, [n as u8; 100], "in order, unchanged");
                Instant::now()
            })
            .collect::<Vec<_>>()
    });
    let mut sent = Vec::new();
    for n in 0..count {
        sent.push(Instant::now());
        stream.write_all(&[n as u8; 100]).unwrap();
        std::thread::sleep(Duration::from_millis(2));
    }
    let answered = collector.join().unwrap();
    let each: Vec<Duration> = sent.iter().zip(&answered).map(|(s, a)| *a - *s).collect();
    assert!(each.iter().all(|&d| d >= round_trip), "{each:?}");
    let typical = median(each.clone());
    assert!(typical <= round_trip + Duration::from_millis(8), "median {typical:?} of {each:?}");
    let total = *answered.last().unwrap() - sent[0];
    assert!(total < Duration::from_millis(400), "{count} pipelined messages took {total:?}");
}

#[test]
fn large_messages_pass_unchanged_both_ways() {
    // 8 MiB of pseudo-random bytes, written 1 MiB at a time (a COPY stream's size, and rows
    // far larger than one chunk), read back by another thread while it is still sent.
    let _serial = serial();
    let relay = relay(Duration::from_millis(1));
    let mut stream = connect(&relay);
    let mut reader = stream.try_clone().unwrap();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let data: Vec<u8> = (0..8 << 20)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect();
    let expected = data.len();
    let collector = std::thread::spawn(move || {
        let mut received = vec![0u8; expected];
        reader.read_exact(&mut received).unwrap();
        received
    });
    for chunk in data.chunks(1 << 20) {
        stream.write_all(chunk).unwrap();
    }
    let received = collector.join().unwrap();
    assert!(received == data, "the bytes came back changed");
    // And the end of the stream passes through too: the echo server closes in turn.
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty());
}

#[test]
fn calibration_measures_what_the_relay_adds_against_the_target() {
    let _serial = serial();
    let zero = bookstore_relay::calibrate(Duration::ZERO, 200).unwrap();
    assert_eq!(zero.samples, 200);
    assert!(zero.added_p50 < Duration::from_millis(1), "{zero:?}");
    let one = bookstore_relay::calibrate(Duration::from_millis(2), 100).unwrap();
    // At least the target (the direct trip subtracted is the same machine's loopback).
    assert!(one.added_p50 >= Duration::from_micros(1900), "{one:?}");
    assert!(one.error_p50_us() < 5000.0, "{one:?}");
    assert!(one.added_p99 >= one.added_p50);
}
