//! A forked child cannot open its parent's sealed secrets (ENOKEY), and
//! can seal and open its own.  A file of its own, so that its process
//! holds one test thread when it forks: the child then runs only code
//! whose locks no other thread held (libsecbuf-seal's and libsecbuf's
//! atfork handlers take theirs; glibc's fork() takes malloc's).  The child
//! never returns into the test harness: it reports through its exit code.
use secbuf::{Op, Sealed, SealedBytes, SecretBox};

/// What the child found, as an exit code.
fn child(key: &Sealed<[u8; 32]>) -> i32 {
    let mut called = false;
    match key.with(|_| called = true) {
        Err(e) if e.op() == Op::Open && e.raw_os_error() == Some(libc::ENOKEY) => {}
        Err(_) => return 2,
        Ok(()) => return 1,
    }
    if called {
        return 3;
    }
    match key.open() {
        Err(e) if e.raw_os_error() == Some(libc::ENOKEY) => {}
        _ => return 4,
    }
    if !e_says_fork(key) {
        return 5;
    }
    // Its own secret: sealed under a prekey of its own, it opens.
    let mut b = match SecretBox::<[u8; 8]>::zeroed() {
        Ok(b) => b,
        Err(_) => return 6,
    };
    *b.expose_secret_mut() = [7; 8];
    match Sealed::seal(b).and_then(|own| own.with(|v: &[u8; 8]| *v == [7; 8])) {
        Ok(true) => 0,
        _ => 7,
    }
}

fn e_says_fork(key: &Sealed<[u8; 32]>) -> bool {
    match key.with(|_| ()) {
        Err(e) => e.to_string().contains("forked child"),
        Ok(()) => false,
    }
}

#[test]
fn a_forked_child_cannot_open_its_parents_sealed_secret() {
    let key = Sealed::<[u8; 32]>::from_reader(&mut &[0x5a; 32][..]).unwrap();
    let bytes = SealedBytes::from_reader(&mut &[1u8; 100][..], 100).unwrap();
    // SAFETY: one test thread in this process (see the file's comment);
    // the child calls only the binding and exits with _exit, never
    // unwinding into the harness or running its destructors twice.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let code = child(&key);
        // SAFETY: ends the child at once, as intended.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: status is a valid out-parameter; pid is our child.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    assert!(
        libc::WIFEXITED(status),
        "the child died: status {:#x}",
        status
    );
    let code = libc::WEXITSTATUS(status);
    assert_eq!(
        code, 0,
        "the child: 1 opened its parent's secret, 2 another error than ENOKEY, 3 called back, \
         4 open() did not fail so, 5 no advice, 6-7 could not seal its own; got {}",
        code
    );
    // The parent still opens both.
    assert_eq!(key.with(|v: &[u8; 32]| v[0]).unwrap(), 0x5a);
    assert_eq!(bytes.with(|k| k.len()).unwrap(), 100);
}
