use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::util::{Flippable, INSIDE, OUTSIDE};

/// How many times the flipper swaps `d` with the symlink leading out.
const FLIPS: usize = 20_000;
/// Concurrent readers (and as many writers).
const READERS: usize = 8;

/// 8 threads `box.cat d/x` and 8 `box.write d/w<i>` while another flips `d` between a directory
/// and a symlink to a directory outside the root: a read returns the inside file or an error,
/// never the outside one, and no write lands outside.
#[test]
fn cat_and_write_stay_inside_while_a_directory_flips_to_a_symlink() {
    let f = Arc::new(Flippable::new());
    let (done, flipper) = f.flip(FLIPS);
    let workers: Vec<_> = (0..READERS * 2)
        .map(|i| {
            let (f, done) = (Arc::clone(&f), Arc::clone(&done));
            std::thread::spawn(move || {
                let (mut inside, mut refused) = (0usize, 0usize);
                while !done.load(Ordering::SeqCst) {
                    if i < READERS {
                        match f.project.cat(Path::new("d/x")) {
                            Ok(text) => {
                                assert_ne!(text.content, OUTSIDE, "box.cat read the file outside the root");
                                assert_eq!(text.content, INSIDE);
                                inside += 1;
                            }
                            Err(_) => refused += 1,
                        }
                    } else {
                        match f.project.write(Path::new(&format!("d/w{i}")), "written\n") {
                            Ok(_) => inside += 1,
                            Err(_) => refused += 1,
                        }
                    }
                }
                (inside, refused)
            })
        })
        .collect();
    flipper.join().unwrap();
    let (mut inside, mut refused) = (0, 0);
    for w in workers {
        let (i, r) = w.join().unwrap();
        inside += i;
        refused += r;
    }
    assert!(f.escaped_writes().is_empty(), "writes landed outside the root: {:?}", f.escaped_writes());
    assert_eq!(std::fs::read_to_string(f.outside.path().join("x")).unwrap(), OUTSIDE);
    // Both states were seen, or the race was not run at all.
    assert!(inside > 0 && refused > 0, "inside {inside}, refused {refused}");
    eprintln!("{FLIPS} flips: {inside} calls inside, {refused} refused");
}
