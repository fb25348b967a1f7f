//! Non-blocking messages: `isend`, posted receives and waits on their handles.

use super::*;

fn isend(to: usize, bytes: f64) -> Request {
    Request::Send {
        to,
        bytes,
        direction: None,
        host_memory: HostMemory::default(),
        tracked: true,
    }
}

fn post(from: usize) -> Request {
    Request::Post {
        from: Source::Pid(from),
    }
}

fn wait(handles: &[usize]) -> Request {
    Request::Wait {
        handles: handles.iter().map(|&k| Handle(k as u64)).collect(),
    }
}

/// Per wait that returned: the waiting pid and `field` of each handle's message (none for a
/// send's).
fn completions(seen: &[Resumed], field: impl Fn(&Message) -> f64) -> Vec<(usize, Vec<Option<f64>>)> {
    seen.iter()
        .filter_map(|(pid, _, r)| match r {
            Resume::Completed(messages) => {
                Some((*pid, messages.iter().map(|m| m.as_ref().map(&field)).collect()))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn an_isend_completes_at_delivery_and_a_posted_receive_takes_its_message() {
    // 1000 B from a to b: 1 + 1 = 2 ms. A0 waits for its isend: 2 ms. B0 posts a receive,
    // tests it at once (not done), computes 5 ms, and its wait returns at once with the
    // message. B1 posts and waits: 2 ms, blocked all along.
    let r = run_seen(
        &pair(2),
        &[("A", 2), ("B", 2)],
        vec![
            vec![isend(2, 1000.0), wait(&[0])],
            vec![isend(3, 1000.0)],
            vec![
                post(0),
                Request::Test { handle: Handle(0) },
                compute(5e-3, None),
                wait(&[0]),
            ],
            vec![post(1), wait(&[0])],
        ],
    )
    .unwrap();
    let (results, seen) = r;
    assert_times(&finish_times(&results), &[2e-3, 0.0, 5e-3, 2e-3]);
    assert!(close(results.processes[3].wait_time, 2e-3));
    assert!(close(results.processes[2].wait_time, 0.0));
    let tested: Vec<bool> = seen
        .iter()
        .filter_map(|(_, _, r)| match r {
            Resume::Tested(done) => Some(*done),
            _ => None,
        })
        .collect();
    assert_eq!(tested, [false]);
    let completed = completions(&seen, |m| m.arrived);
    assert_eq!(completed.len(), 3);
    assert!(completed.contains(&(0, vec![None])), "{completed:?}");
    assert!(completed
        .iter()
        .any(|(pid, m)| *pid == 2 && m.len() == 1 && m[0].is_some_and(|t| close(t, 2e-3))));
}

#[test]
fn posted_receives_take_messages_before_a_blocking_receive_and_in_posting_order() {
    // A0 sends 1000 B then 3000 B to B0, which posts two receives and waits for both, the
    // second first: the posted receives take the messages in the order the messages arrive
    // and the receives were posted.
    let (results, seen) = run_seen(
        &pair(1),
        &[("A", 1), ("B", 1)],
        vec![
            vec![send(1, 1000.0), send(1, 3000.0)],
            vec![post(0), post(0), wait(&[1, 0])],
        ],
    )
    .unwrap();
    // 1000 B: 1 ms of bytes, 3000 B: 3 ms; shared from 1 ms: the small one ends at 3 ms, the
    // large one has 2 ms left, alone: 5 ms.
    assert!(close(results.processes[1].finish_time, 5e-3));
    let sizes = completions(&seen, |m| m.bytes);
    assert_eq!(sizes, [(1, vec![Some(3000.0), Some(1000.0)])]);
}

#[test]
fn waiting_for_another_process_s_handle_fails_the_run() {
    // B0 has no handle of its own: its Wait names A0's isend.
    let err = run(
        &pair(1),
        &[("A", 1), ("B", 1)],
        vec![
            vec![isend(1, 10.0)],
            vec![Request::Wait {
                handles: vec![Handle(0)],
            }],
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("handle 0 is not one of this process's") && err.contains("B[0]"),
        "{err}"
    );
}
