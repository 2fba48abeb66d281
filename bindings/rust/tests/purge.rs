//! secbuf::purge() zeroes every live buffer of the process, frozen ones
//! included: a file of its own, as it would wipe other tests' buffers.
use secbuf::{SecretBox, SecretBuf};

#[test]
fn purge_zeroes_live_buffers_which_stay_usable() {
    let mut b = SecretBuf::new(64).unwrap();
    b.copy_from_slice(&[0xaa; 64]);
    let mut p = SecretBuf::options().packed(true).alloc(32).unwrap();
    p.copy_from_slice(&[0xbb; 32]);
    let mut k = SecretBox::<[u8; 16]>::zeroed().unwrap();
    *k = [0xcc; 16];
    let mut f = SecretBuf::new(16).unwrap();
    f.copy_from_slice(&[0xdd; 16]);
    let f = f.freeze().unwrap();
    secbuf::purge();
    assert!(b.iter().all(|&x| x == 0));
    assert!(p.iter().all(|&x| x == 0));
    assert_eq!(*k, [0; 16]);
    assert!(f.iter().all(|&x| x == 0));
    b[0] = 1;
    p[0] = 1;
}
