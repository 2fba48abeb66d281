//! secbuf::purge() zeroes every live buffer of the process, frozen ones
//! included: a file of its own, as it would wipe other tests' buffers
//! (and its contract wants no other thread using secbuf meanwhile).
use secbuf::{Options, SecretBox, SecretBuf};

#[test]
fn purge_zeroes_live_buffers_which_stay_usable() {
    let mut b = SecretBuf::new(64).unwrap();
    b.expose_secret_mut().fill(0xaa);
    let mut p = SecretBuf::with_options(&Options::new().packed(true), 32).unwrap();
    p.expose_secret_mut().fill(0xbb);
    let mut k = SecretBox::<[u8; 16]>::zeroed().unwrap();
    *k.expose_secret_mut() = [0xcc; 16];
    let mut w = SecretBox::<u64>::zeroed_with(&Options::new().packed(true)).unwrap();
    *w.expose_secret_mut() = u64::MAX;
    let mut f = SecretBuf::new(16).unwrap();
    f.expose_secret_mut().fill(0xdd);
    let f = f.freeze().unwrap();
    // SAFETY: this test is alone in its process (a file of its own), and
    // no slice or reference lent before the purge is used after it.
    unsafe { secbuf::purge() };
    assert!(b.expose_secret().iter().all(|&x| x == 0));
    assert!(p.expose_secret().iter().all(|&x| x == 0));
    assert_eq!(k.expose_secret(), &[0; 16]);
    assert_eq!(*w.expose_secret(), 0);
    assert!(f.expose_secret().iter().all(|&x| x == 0));
    b.expose_secret_mut()[0] = 1;
    p.expose_secret_mut()[0] = 1;
}
