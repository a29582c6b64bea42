//! crossbeam-channel's `tests/select.rs` cases for receive operations,
//! ported to waitwise's `Select` (`channel/select.rs`): named after
//! crossbeam's tests. crossbeam's unbounded channels are bounded ones
//! large enough here; its waits on timeouts against sleeps become waits
//! without a deadline (tests never assert timing); its rendezvous
//! channels (`bounded(0)`), `after` and `tick` have no counterpart, so
//! the cases that need them are left out or use a full channel.
#![cfg(not(loom))]

use std::time::Duration;
use waitwise::channel::{bounded, Select, TryRecvError};

#[test]
fn smoke1() {
    let (s1, r1) = bounded::<usize>(4);
    let (s2, r2) = bounded::<usize>(4);
    s1.send(1).unwrap();
    let mut sel = Select::new();
    let oper1 = sel.recv(&r1);
    let oper2 = sel.recv(&r2);
    let oper = sel.select();
    match oper.index() {
        i if i == oper1 => assert_eq!(oper.recv(&r1), Ok(1)),
        i if i == oper2 => panic!(),
        _ => unreachable!(),
    }
    s2.send(2).unwrap();
    let mut sel = Select::new();
    let oper1 = sel.recv(&r1);
    let oper2 = sel.recv(&r2);
    let oper = sel.select();
    match oper.index() {
        i if i == oper1 => panic!(),
        i if i == oper2 => assert_eq!(oper.recv(&r2), Ok(2)),
        _ => unreachable!(),
    }
}

#[test]
fn smoke2() {
    let (_s1, r1) = bounded::<i32>(1);
    let (_s2, r2) = bounded::<i32>(1);
    let (_s3, r3) = bounded::<i32>(1);
    let (_s4, r4) = bounded::<i32>(1);
    let (s5, r5) = bounded::<i32>(1);
    s5.send(5).unwrap();
    let mut sel = Select::new();
    let opers = [
        sel.recv(&r1),
        sel.recv(&r2),
        sel.recv(&r3),
        sel.recv(&r4),
        sel.recv(&r5),
    ];
    let oper = sel.select();
    assert_eq!(oper.index(), opers[4]);
    assert_eq!(oper.recv(&r5), Ok(5));
}

#[test]
fn disconnected() {
    let (s1, r1) = bounded::<i32>(1);
    let (s2, r2) = bounded::<i32>(1);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            drop(s1);
            std::thread::sleep(Duration::from_millis(50));
            s2.send(5).unwrap();
        });
        let mut sel = Select::new();
        let oper1 = sel.recv(&r1);
        let _oper2 = sel.recv(&r2);
        let oper = sel.select();
        // r1's disconnection comes first; r2 may have its value too.
        if oper.index() == oper1 {
            assert!(oper.recv(&r1).is_err());
        } else {
            assert_eq!(oper.recv(&r2), Ok(5));
            return;
        }
        r2.recv().unwrap();
    });
    let mut sel = Select::new();
    let oper1 = sel.recv(&r1);
    let _oper2 = sel.recv(&r2);
    let oper = sel.select();
    assert_eq!(oper.index(), oper1);
    assert!(oper.recv(&r1).is_err());
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(50));
            drop(s2);
        });
        let mut sel = Select::new();
        let oper1 = sel.recv(&r2);
        let oper = sel.select();
        assert_eq!(oper.index(), oper1);
        assert!(oper.recv(&r2).is_err());
    });
}

#[test]
fn default() {
    let (s1, r1) = bounded::<i32>(1);
    let (s2, r2) = bounded::<i32>(1);
    let mut sel = Select::new();
    let _oper1 = sel.recv(&r1);
    let _oper2 = sel.recv(&r2);
    assert!(sel.try_select().is_err());
    drop(s1);
    let mut sel = Select::new();
    let oper1 = sel.recv(&r1);
    let oper2 = sel.recv(&r2);
    match sel.try_select() {
        Err(_) => panic!(),
        Ok(oper) => match oper.index() {
            i if i == oper1 => assert!(oper.recv(&r1).is_err()),
            i if i == oper2 => panic!(),
            _ => unreachable!(),
        },
    }
    s2.send(2).unwrap();
    let mut sel = Select::new();
    let oper1 = sel.recv(&r2);
    match sel.try_select() {
        Err(_) => panic!(),
        Ok(oper) => match oper.index() {
            i if i == oper1 => assert_eq!(oper.recv(&r2), Ok(2)),
            _ => unreachable!(),
        },
    }
    let mut sel = Select::new();
    let _oper1 = sel.recv(&r2);
    assert!(sel.try_select().is_err());
    let mut sel = Select::new();
    assert!(sel.try_select().is_err());
}

/// crossbeam's `timeout`, without its timing: a selection over empty
/// channels times out, and a zero timeout over nothing is an error.
#[test]
fn timeout() {
    let (_s1, r1) = bounded::<i32>(1);
    let (_s2, r2) = bounded::<i32>(1);
    let mut sel = Select::new();
    let _ = sel.recv(&r1);
    let _ = sel.recv(&r2);
    assert!(sel.select_timeout(Duration::from_millis(5)).is_err());
    let mut sel = Select::new();
    assert!(sel.select_timeout(Duration::from_millis(1)).is_err());
}

/// crossbeam's `unblocks`, receive half: a selector asleep on two empty
/// channels wakes for a send on the second.
#[test]
fn unblocks() {
    let (_s1, r1) = bounded::<i32>(1);
    let (s2, r2) = bounded::<i32>(1);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            s2.send(2).unwrap();
        });
        let mut sel = Select::new();
        let oper1 = sel.recv(&r1);
        let oper2 = sel.recv(&r2);
        let oper = sel.select();
        match oper.index() {
            i if i == oper1 => panic!(),
            i if i == oper2 => assert_eq!(oper.recv(&r2), Ok(2)),
            _ => unreachable!(),
        }
    });
}

#[test]
fn preflight1() {
    let (s, r) = bounded(1);
    s.send(()).unwrap();
    let mut sel = Select::new();
    let oper1 = sel.recv(&r);
    let oper = sel.select();
    match oper.index() {
        i if i == oper1 => drop(oper.recv(&r)),
        _ => unreachable!(),
    }
}

#[test]
fn preflight2() {
    let (s, r) = bounded(1);
    drop(s.clone());
    s.send(()).unwrap();
    drop(s);
    let mut sel = Select::new();
    let oper1 = sel.recv(&r);
    let oper = sel.select();
    match oper.index() {
        i if i == oper1 => assert_eq!(oper.recv(&r), Ok(())),
        _ => unreachable!(),
    }
    assert_eq!(r.try_recv(), Err(TryRecvError::Disconnected));
}

#[test]
fn preflight3() {
    let (s, r) = bounded(1);
    drop(s.clone());
    s.send(()).unwrap();
    drop(s);
    r.recv().unwrap();
    let mut sel = Select::new();
    let oper1 = sel.recv(&r);
    let oper = sel.select();
    match oper.index() {
        i if i == oper1 => assert!(oper.recv(&r).is_err()),
        _ => unreachable!(),
    }
}

#[test]
fn stress_recv() {
    const COUNT: usize = 10_000;
    let (s1, r1) = bounded(COUNT);
    let (s2, r2) = bounded(5);
    let (s3, r3) = bounded(100);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            for i in 0..COUNT {
                s1.send(i).unwrap();
                r3.recv().unwrap();
                s2.send(i).unwrap();
                r3.recv().unwrap();
            }
        });
        for i in 0..COUNT {
            for _ in 0..2 {
                let mut sel = Select::new();
                let oper1 = sel.recv(&r1);
                let oper2 = sel.recv(&r2);
                let oper = sel.select();
                match oper.index() {
                    ix if ix == oper1 => assert_eq!(oper.recv(&r1), Ok(i)),
                    ix if ix == oper2 => assert_eq!(oper.recv(&r2), Ok(i)),
                    _ => unreachable!(),
                }
                s3.send(()).unwrap();
            }
        }
    });
}

/// crossbeam's `fairness1` without `after` and `tick`: with both
/// channels always ready, each is selected a fair share of the time.
#[test]
fn fairness1() {
    const COUNT: usize = 10_000;
    let (s1, r1) = bounded::<()>(COUNT);
    let (s2, r2) = bounded::<()>(COUNT);
    for _ in 0..COUNT {
        s1.send(()).unwrap();
        s2.send(()).unwrap();
    }
    let mut hits = [0usize; 2];
    for _ in 0..COUNT {
        let mut sel = Select::new();
        let oper1 = sel.recv(&r1);
        let oper2 = sel.recv(&r2);
        let oper = sel.select();
        match oper.index() {
            i if i == oper1 => {
                oper.recv(&r1).unwrap();
                hits[0] += 1;
            }
            i if i == oper2 => {
                oper.recv(&r2).unwrap();
                hits[1] += 1;
            }
            _ => unreachable!(),
        }
    }
    assert!(hits.iter().all(|&x| x >= COUNT / hits.len() / 2));
}

/// A selected operation completed with another channel's receiver panics.
#[test]
#[should_panic(expected = "passed a receiver that wasn't selected")]
fn recv_with_the_wrong_receiver_panics() {
    let (s1, r1) = bounded::<i32>(1);
    let (_s2, r2) = bounded::<i32>(1);
    s1.send(1).unwrap();
    let mut sel = Select::new();
    let _ = sel.recv(&r1);
    let oper = sel.select();
    let _ = oper.recv(&r2);
}

#[test]
fn both_ready() {
    let (s1, r1) = bounded(1);
    let (s2, r2) = bounded(1);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            s1.send(1).unwrap();
            assert_eq!(r2.recv().unwrap(), 2);
        });
        for _ in 0..2 {
            let mut sel = Select::new();
            let oper1 = sel.recv(&r1);
            let oper2 = sel.send(&s2);
            let oper = sel.select();
            match oper.index() {
                i if i == oper1 => assert_eq!(oper.recv(&r1), Ok(1)),
                i if i == oper2 => oper.send(&s2, 2).unwrap(),
                _ => unreachable!(),
            }
        }
    });
}

/// crossbeam's `unblocks`, send half: a selector waiting to send on two
/// full channels wakes when a receive makes room in the first.
#[test]
fn unblocks_send() {
    let (s1, r1) = bounded::<i32>(1);
    let (s2, _r2) = bounded::<i32>(1);
    s1.send(0).unwrap();
    s2.send(0).unwrap();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(r1.recv().unwrap(), 0);
            assert_eq!(r1.recv().unwrap(), 1);
        });
        let mut sel = Select::new();
        let oper1 = sel.send(&s1);
        let oper2 = sel.send(&s2);
        let oper = sel.select();
        match oper.index() {
            i if i == oper1 => oper.send(&s1, 1).unwrap(),
            i if i == oper2 => panic!(),
            _ => unreachable!(),
        }
    });
}

/// crossbeam's `send_recv_same_channel`, second half: on an empty
/// channel the send is ready and the receive is not.
#[test]
fn send_recv_same_channel() {
    let (s, r) = bounded::<i32>(4);
    let mut sel = Select::new();
    let oper1 = sel.send(&s);
    let oper2 = sel.recv(&r);
    match sel.select_timeout(Duration::from_millis(100)) {
        Err(_) => panic!(),
        Ok(oper) => match oper.index() {
            ix if ix == oper1 => assert!(oper.send(&s, 0).is_ok()),
            ix if ix == oper2 => panic!(),
            _ => unreachable!(),
        },
    }
    assert_eq!(r.try_recv(), Ok(0));
}

/// A selected send on a channel whose receivers are gone returns the
/// value.
#[test]
fn disconnected_send() {
    let (s, r) = bounded::<i32>(1);
    s.send(0).unwrap();
    drop(r);
    let mut sel = Select::new();
    let oper1 = sel.send(&s);
    let oper = sel.select();
    assert_eq!(oper.index(), oper1);
    assert_eq!(oper.send(&s, 5).unwrap_err().into_inner(), 5);
}
