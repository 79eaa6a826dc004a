//! RFC 9001 Appendix A vectors, the multipath nonce vector, and robustness of the packet primitives.

use proptest::prelude::*;
use rustls::crypto::cipher::{AeadKey, Iv, Nonce};

use super::{expand_label, extract, hex};
use crate::cc::PathId;
use crate::proto::crypto::{
    CryptoError, HeaderKey, Keys, PacketKey, PacketNumberField, RETRY_TAG_LEN, Side, multipath_nonce,
    retry_integrity_tag, verify_retry_integrity,
};
use crate::proto::packet_number;

const DCID: &str = "8394c8f03e515708";
const V1_SALT: &str = "38762cf7f55934b34d179ae6a4c80cadccbb7f0a";

/// RFC 9001 Appendix A.2: the CRYPTO frame of the client Initial.
const A2_CRYPTO: &str = "060040f1010000ed0303ebf8fa56f12939b9584a3896472ec40bb863cfd3e868
    04fe3a47f06a2b69484c00000413011302010000c000000010000e00000b6578
    616d706c652e636f6dff01000100000a00080006001d00170018001000070005
    04616c706e000500050100000000003300260024001d00209370b2c9caa47fba
    baf4559fedba753de171fa71f50f1ce15d43e994ec74d748002b000302030400
    0d0010000e0403050306030203080408050806002d00020101001c0002400100
    3900320408ffffffffffffffff05048000ffff07048000ffff08011001048000
    75300901100f088394c8f03e51570806048000ffff";

/// RFC 9001 Appendix A.2: the protected client Initial, 1200 bytes.
const A2_PROTECTED: &str = "c000000001088394c8f03e5157080000449e7b9aec34d1b1c98dd7689fb8ec11
    d242b123dc9bd8bab936b47d92ec356c0bab7df5976d27cd449f63300099f399
    1c260ec4c60d17b31f8429157bb35a1282a643a8d2262cad67500cadb8e7378c
    8eb7539ec4d4905fed1bee1fc8aafba17c750e2c7ace01e6005f80fcb7df6212
    30c83711b39343fa028cea7f7fb5ff89eac2308249a02252155e2347b63d58c5
    457afd84d05dfffdb20392844ae812154682e9cf012f9021a6f0be17ddd0c208
    4dce25ff9b06cde535d0f920a2db1bf362c23e596d11a4f5a6cf3948838a3aec
    4e15daf8500a6ef69ec4e3feb6b1d98e610ac8b7ec3faf6ad760b7bad1db4ba3
    485e8a94dc250ae3fdb41ed15fb6a8e5eba0fc3dd60bc8e30c5c4287e53805db
    059ae0648db2f64264ed5e39be2e20d82df566da8dd5998ccabdae053060ae6c
    7b4378e846d29f37ed7b4ea9ec5d82e7961b7f25a9323851f681d582363aa5f8
    9937f5a67258bf63ad6f1a0b1d96dbd4faddfcefc5266ba6611722395c906556
    be52afe3f565636ad1b17d508b73d8743eeb524be22b3dcbc2c7468d54119c74
    68449a13d8e3b95811a198f3491de3e7fe942b330407abf82a4ed7c1b311663a
    c69890f4157015853d91e923037c227a33cdd5ec281ca3f79c44546b9d90ca00
    f064c99e3dd97911d39fe9c5d0b23a229a234cb36186c4819e8b9c5927726632
    291d6a418211cc2962e20fe47feb3edf330f2c603a9d48c0fcb5699dbfe58964
    25c5bac4aee82e57a85aaf4e2513e4f05796b07ba2ee47d80506f8d2c25e50fd
    14de71e6c418559302f939b0e1abd576f279c4b2e0feb85c1f28ff18f58891ff
    ef132eef2fa09346aee33c28eb130ff28f5b766953334113211996d20011a198
    e3fc433f9f2541010ae17c1bf202580f6047472fb36857fe843b19f5984009dd
    c324044e847a4f4a0ab34f719595de37252d6235365e9b84392b061085349d73
    203a4a13e96f5432ec0fd4a1ee65accdd5e3904df54c1da510b0ff20dcc0c77f
    cb2c0e0eb605cb0504db87632cf3d8b4dae6e705769d1de354270123cb11450e
    fc60ac47683d7b8d0f811365565fd98c4c8eb936bcab8d069fc33bd801b03ade
    a2e1fbc5aa463d08ca19896d2bf59a071b851e6c239052172f296bfb5e724047
    90a2181014f3b94a4e97d117b438130368cc39dbb2d198065ae3986547926cd2
    162f40a29f0c3c8745c0f50fba3852e566d44575c29d39a03f0cda721984b6f4
    40591f355e12d439ff150aab7613499dbd49adabc8676eef023b15b65bfc5ca0
    6948109f23f350db82123535eb8a7433bdabcb909271a6ecbcb58b936a88cd4e
    8f2e6ff5800175f113253d8fa9ca8885c2f552e657dc603f252e1a8e308f76f0
    be79e2fb8f5d5fbbe2e30ecadd220723c8c0aea8078cdfcb3868263ff8f09400
    54da48781893a7e49ad5aff4af300cd804a6b6279ab3ff3afb64491c85194aab
    760d58a606654f9f4400e8b38591356fbf6425aca26dc85244259ff2b19c41b9
    f96f3ca9ec1dde434da7d2d392b905ddf3d1f9af93d1af5950bd493f5aa731b4
    056df31bd267b6b90a079831aaf579be0a39013137aac6d404f518cfd4684064
    7e78bfe706ca4cf5e9c5453e9f7cfd2b8b4c8d169a44e55c88d4a9a7f9474241
    e221af44860018ab0856972e194cd934";

/// RFC 9001 Appendix A.3: the server Initial's payload and protected packet.
const A3_PAYLOAD: &str = "02000000000600405a020000560303eefce7f7b37ba1d1632e96677825ddf739
    88cfc79825df566dc5430b9a045a1200130100002e00330024001d00209d3c94
    0d89690b84d08a60993c144eca684d1081287c834d5311bcf32bb9da1a002b00
    020304";
const A3_PROTECTED: &str = "cf000000010008f067a5502a4262b5004075c0d95a482cd0991cd25b0aac406a
    5816b6394100f37a1c69797554780bb38cc5a99f5ede4cf73c3ec2493a1839b3
    dbcba3f6ea46c5b7684df3548e7ddeb9c3bf9c73cc3f3bded74b562bfb19fb84
    022f8ef4cdd93795d77d06edbb7aaf2f58891850abbdca3d20398c276456cbc4
    2158407dd074ee";

/// RFC 9001 Appendix A.5: the ChaCha20-Poly1305 1-RTT secret and what derives from it.
const A5_SECRET: &str = "9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b";
const A5_KEY: &str = "c6d98ff3441c3fe1b2182094f69caa2ed4b716b65488960a7a984979fb23e1c8";
const A5_IV: &str = "e0459b3474bdd0e44a41c144";
const A5_HP: &str = "25a282b9e82f06f21f488917a4fc8f1b73573685608597d0efcb076b0ab7a7a4";
const A5_KU: &str = "1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9";
const A5_PN: u64 = 654_360_564;
const A5_PROTECTED: &str = "4cfe4189655e5cd55c41f69080575d7999c25a5bfb";

/// The ChaCha20-Poly1305 QUIC algorithm of the ring provider.
fn chacha() -> &'static dyn rustls::quic::Algorithm {
    match rustls::crypto::ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256 {
        rustls::SupportedCipherSuite::Tls13(s) => s.quic.unwrap(),
        #[allow(unreachable_patterns)]
        _ => unreachable!(),
    }
}

fn array<const N: usize>(v: &[u8]) -> [u8; N] {
    v.try_into().unwrap()
}

/// The A.5 packet key with `iv` in place of the RFC's IV.
fn a5_packet_key(iv: [u8; 12]) -> PacketKey {
    PacketKey::new(chacha().packet_key(AeadKey::from(array::<32>(&hex(A5_KEY))), Iv::from(iv)))
}

fn a5_header_key() -> HeaderKey {
    HeaderKey::new(chacha().header_protection_key(AeadKey::from(array::<32>(&hex(A5_HP)))))
}

#[test]
fn rfc9001_a1_initial_secrets_and_keys() {
    let initial = extract(&hex(V1_SALT), &hex(DCID));
    assert_eq!(
        initial,
        hex("7db5df06e7a69e432496adedb00851923595221596ae2ae9fb8115c1e9ed0a44")
    );
    let client = expand_label(&initial, "client in", 32);
    assert_eq!(
        client,
        hex("c00cf151ca5be075ed0ebfb5c80323c42d6b7db67881289af4008f1f6c357aea")
    );
    assert_eq!(
        expand_label(&client, "quic key", 16),
        hex("1f369613dd76d5467730efcbe3b1a22d")
    );
    assert_eq!(
        expand_label(&client, "quic iv", 12),
        hex("fa044b2f42a3fd3b46fb255c")
    );
    assert_eq!(
        expand_label(&client, "quic hp", 16),
        hex("9f50449e04a0e810283a1e9933adedd2")
    );
    let server = expand_label(&initial, "server in", 32);
    assert_eq!(
        server,
        hex("3c199828fd139efd216c155ad844cc81fb82fa8d7446fa7d78be803acdda951b")
    );
    assert_eq!(
        expand_label(&server, "quic key", 16),
        hex("cf3a5331653c364c88f0f379b6067e37")
    );
    assert_eq!(
        expand_label(&server, "quic iv", 12),
        hex("0ac1493ca1905853b0bba03e")
    );
    assert_eq!(
        expand_label(&server, "quic hp", 16),
        hex("c206b8d9b9f0f37644430b490eeaa314")
    );
}

#[test]
fn rfc9001_a2_client_initial() {
    let keys = Keys::initial(&hex(DCID), Side::Client).unwrap();
    let header = hex("c300000001088394c8f03e5157080000449e00000002");
    let crypto = hex(A2_CRYPTO);
    // 1200 bytes: 22 of header, the CRYPTO frame, PADDING up to the 16-byte tag.
    let mut packet = header.clone();
    packet.extend_from_slice(&crypto);
    packet.resize(1200, 0);

    keys.local
        .packet
        .seal(PathId(0), 2, &mut packet, header.len())
        .unwrap();
    // The header-protection sample starts 4 bytes after the packet number's start (offset 18).
    assert_eq!(&packet[22..38], &hex("d1b1c98dd7689fb8ec11d242b123dc9b")[..]);
    keys.local.header.apply(&mut packet, 18).unwrap();
    // Mask 437b9aec36: first byte c3 ^ (43 & 0x0f) = c0; packet number 00000002 ^ 7b9aec36 = 7b9aec34.
    assert_eq!(
        &packet[..22],
        &hex("c000000001088394c8f03e5157080000449e7b9aec34")[..]
    );
    assert_eq!(packet, hex(A2_PROTECTED));

    // The server opens it.
    let server = Keys::initial(&hex(DCID), Side::Server).unwrap();
    let field = server.remote.header.remove(&mut packet, 18).unwrap();
    assert_eq!(field, PacketNumberField { len: 4, truncated: 2 });
    assert_eq!(&packet[..22], &header[..]);
    let len = server.remote.packet.open(PathId(0), 2, &mut packet, 22).unwrap();
    assert_eq!(len, 1200 - 22 - 16);
    assert_eq!(&packet[22..22 + crypto.len()], &crypto[..]);
}

#[test]
fn rfc9001_a3_server_initial() {
    let keys = Keys::initial(&hex(DCID), Side::Server).unwrap();
    let header = hex("c1000000010008f067a5502a4262b50040750001");
    let payload = hex(A3_PAYLOAD);
    let mut packet = header.clone();
    packet.extend_from_slice(&payload);
    packet.resize(packet.len() + 16, 0);
    keys.local
        .packet
        .seal(PathId(0), 1, &mut packet, header.len())
        .unwrap();
    keys.local.header.apply(&mut packet, 18).unwrap();
    assert_eq!(packet, hex(A3_PROTECTED));

    let client = Keys::initial(&hex(DCID), Side::Client).unwrap();
    let field = client.remote.header.remove(&mut packet, 18).unwrap();
    assert_eq!(field, PacketNumberField { len: 2, truncated: 1 });
    let len = client.remote.packet.open(PathId(0), 1, &mut packet, 20).unwrap();
    assert_eq!(&packet[20..20 + len], &payload[..]);
}

#[test]
fn rfc9001_a4_retry_integrity_tag() {
    let odcid = hex(DCID);
    let retry = hex("ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba");
    let (body, tag) = retry.split_at(retry.len() - RETRY_TAG_LEN);
    assert_eq!(retry_integrity_tag(&odcid, body).unwrap(), tag);
    assert!(verify_retry_integrity(&odcid, &retry));
}

#[test]
fn rfc9000_17_2_5_2_retry_with_invalid_tag_is_discarded() {
    let odcid = hex(DCID);
    let retry = hex("ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba");
    for i in 0..retry.len() {
        let mut bad = retry.clone();
        bad[i] ^= 0x01;
        assert!(!verify_retry_integrity(&odcid, &bad), "flipped byte {i}");
    }
    assert!(
        !verify_retry_integrity(&hex("8394c8f03e515709"), &retry),
        "another ODCID"
    );
    assert!(
        !verify_retry_integrity(&odcid, &retry[..15]),
        "shorter than a tag"
    );
    assert!(
        !verify_retry_integrity(&[0; 21], &retry),
        "ODCID longer than 20 bytes"
    );
    assert_eq!(
        retry_integrity_tag(&[0; 21], &retry),
        Err(CryptoError::ConnectionIdTooLong)
    );
}

#[test]
fn rfc9001_a5_chacha20_poly1305_short_header() {
    // The key schedule, computed independently of rustls.
    let secret = hex(A5_SECRET);
    assert_eq!(expand_label(&secret, "quic key", 32), hex(A5_KEY));
    assert_eq!(expand_label(&secret, "quic iv", 12), hex(A5_IV));
    assert_eq!(expand_label(&secret, "quic hp", 32), hex(A5_HP));
    assert_eq!(expand_label(&secret, "quic ku", 32), hex(A5_KU));

    // Nonce: IV XOR packet number.
    let iv = array::<12>(&hex(A5_IV));
    assert_eq!(
        multipath_nonce(&iv, PathId(0), A5_PN),
        array::<12>(&hex("e0459b3474bdd0e46d417eb0"))
    );

    // Header 4200bff4: short header, 3-byte packet number 0x00bff4; payload: one PING frame.
    let packet_key = a5_packet_key(iv);
    let header_key = a5_header_key();
    let mut packet = hex("4200bff4 01");
    packet.resize(packet.len() + 16, 0);
    packet_key.seal(PathId(0), A5_PN, &mut packet, 4).unwrap();
    assert_eq!(
        &packet[5..21],
        &hex("5e5cd55c41f69080575d7999c25a5bfb")[..],
        "sample"
    );
    header_key.apply(&mut packet, 1).unwrap();
    assert_eq!(packet, hex(A5_PROTECTED));

    // And back: 5 low bits unmasked, 3-byte packet number expanded.
    let field = header_key.remove(&mut packet, 1).unwrap();
    assert_eq!(packet[0], 0x42);
    assert_eq!(
        field,
        PacketNumberField {
            len: 3,
            truncated: 0x00bff4
        }
    );
    assert_eq!(
        packet_number::decode(field.truncated, field.len, Some(A5_PN - 1)),
        A5_PN
    );
    let len = packet_key.open(PathId(0), A5_PN, &mut packet, 4).unwrap();
    assert_eq!(&packet[4..4 + len], &[0x01]);
}

#[test]
fn multipath_nonce_vector() {
    // draft-ietf-quic-multipath-21: IV 6b26114b9cba2b63a9e8dd4f, path 3, PN 54321.
    let iv = array::<12>(&hex("6b26114b9cba2b63a9e8dd4f"));
    let nonce = multipath_nonce(&iv, PathId(3), 54321);
    assert_eq!(nonce, array::<12>(&hex("6b2611489cba2b63a9e8097e")));
    // rustls computes the same nonce, and for path 0 the RFC 9001 one.
    assert_eq!(Nonce::for_path(3, &Iv::from(iv), 54321).0, nonce);
    assert_eq!(
        multipath_nonce(&iv, PathId(0), 54321),
        Nonce::new(&Iv::from(iv), 54321).0
    );
}

fn sealed(key: &PacketKey, path: PathId, pn: u64) -> Vec<u8> {
    let mut packet = hex("4100000007 0102030405060708090a");
    packet.resize(packet.len() + 16, 0);
    key.seal(path, pn, &mut packet, 5).unwrap();
    packet
}

#[test]
fn multipath_seal_uses_the_path_id_in_the_nonce() {
    let iv = array::<12>(&hex(A5_IV));
    let key = a5_packet_key(iv);
    let on_path0 = sealed(&key, PathId(0), 7);
    let on_path3 = sealed(&key, PathId(3), 7);
    assert_ne!(on_path0, on_path3);
    // Sealing on path 3 is sealing on path 0 with IV XOR (3 << 64): the nonce formula, end to end.
    let shifted = a5_packet_key(multipath_nonce(&iv, PathId(3), 0));
    assert_eq!(sealed(&shifted, PathId(0), 7), on_path3);

    // Opens only with the path ID it was sealed for.
    for (path, ok) in [
        (PathId(3), true),
        (PathId(0), false),
        (PathId(4), false),
        (PathId(u32::MAX), false),
    ] {
        let mut p = on_path3.clone();
        let res = key.open(path, 7, &mut p, 5);
        assert_eq!(res.is_ok(), ok, "{path}");
        if !ok {
            assert_eq!(res, Err(CryptoError::AuthenticationFailed));
        }
    }
    let mut p = on_path0.clone();
    assert!(key.open(PathId(0), 7, &mut p, 5).is_ok());
}

#[test]
fn tampered_packets_fail_to_open() {
    let key = a5_packet_key(array::<12>(&hex(A5_IV)));
    let good = sealed(&key, PathId(2), 99);
    for i in 0..good.len() {
        let mut bad = good.clone();
        bad[i] ^= 0x80;
        assert_eq!(
            key.open(PathId(2), 99, &mut bad, 5),
            Err(CryptoError::AuthenticationFailed),
            "byte {i}"
        );
    }
    let mut p = good.clone();
    assert_eq!(
        key.open(PathId(2), 98, &mut p, 5),
        Err(CryptoError::AuthenticationFailed),
        "wrong pn"
    );
}

#[test]
fn short_or_out_of_range_inputs_are_errors() {
    let key = a5_packet_key(array::<12>(&hex(A5_IV)));
    let hp = a5_header_key();
    let mut tiny = vec![0u8; 20];
    assert_eq!(
        key.seal(PathId(0), 0, &mut tiny, 5),
        Err(CryptoError::TooShortForTag)
    );
    assert_eq!(
        key.open(PathId(0), 0, &mut tiny, 5),
        Err(CryptoError::TooShortForTag)
    );
    let mut room = vec![0u8; 40];
    assert_eq!(
        key.seal(PathId(0), 1 << 62, &mut room, 5),
        Err(CryptoError::PacketNumberOutOfRange)
    );
    // RFC 9001 §5.4.2: a packet shorter than pn_offset + 4 + 16 has no complete sample.
    let mut short = vec![0x40u8; 1 + 4 + 15];
    assert_eq!(hp.remove(&mut short, 1), Err(CryptoError::TooShortForSample));
    assert_eq!(hp.apply(&mut short, 1), Err(CryptoError::TooShortForSample));
    let mut exact = vec![0x40u8; 1 + 4 + 16];
    assert!(hp.remove(&mut exact, 1).is_ok());
    assert_eq!(hp.remove(&mut exact, 0), Err(CryptoError::TooShortForSample));
}

#[test]
fn rfc9000_17_2_initial_dcid_longer_than_20_bytes_is_rejected() {
    assert!(Keys::initial(&[7; 20], Side::Server).is_ok());
    assert_eq!(
        Keys::initial(&[7; 21], Side::Server).err(),
        Some(CryptoError::ConnectionIdTooLong)
    );
}

#[test]
fn header_protection_masks_4_bits_long_5_bits_short() {
    let hp = a5_header_key();
    // A.5's mask is aefefe7d03: first mask byte 0xae.
    let sample = hex("5e5cd55c41f69080575d7999c25a5bfb");
    let mut short = hex("42 00bff4 00");
    short.extend_from_slice(&sample);
    let mut long = short.clone();
    long[0] = 0xc2;
    hp.apply(&mut short, 1).unwrap();
    hp.apply(&mut long, 1).unwrap();
    assert_eq!(short[0], 0x42 ^ (0xae & 0x1f));
    assert_eq!(long[0], 0xc2 ^ (0xae & 0x0f));
}

proptest! {
    #[test]
    fn seal_open_round_trip(
        payload in proptest::collection::vec(any::<u8>(), 0..200),
        header in proptest::collection::vec(any::<u8>(), 1..40),
        path in any::<u32>(),
        pn in 0..=packet_number::MAX_PACKET_NUMBER,
    ) {
        let key = a5_packet_key(array::<12>(&hex(A5_IV)));
        let mut packet = header.clone();
        packet.extend_from_slice(&payload);
        packet.resize(packet.len() + key.tag_len(), 0);
        let total = packet.len();
        key.seal(PathId(path), pn, &mut packet, header.len()).unwrap();
        prop_assert_eq!(packet.len(), total);
        let len = key.open(PathId(path), pn, &mut packet, header.len()).unwrap();
        prop_assert_eq!(len, payload.len());
        prop_assert_eq!(&packet[header.len()..header.len() + len], &payload[..]);
    }

    #[test]
    fn header_protection_round_trip(
        mut packet in proptest::collection::vec(any::<u8>(), 60..100),
        pn_offset in 1usize..30,
    ) {
        let hp = a5_header_key();
        let original = packet.clone();
        hp.apply(&mut packet, pn_offset).unwrap();
        let field = hp.remove(&mut packet, pn_offset).unwrap();
        prop_assert_eq!(field.len, usize::from(original[0] & 3) + 1);
        prop_assert_eq!(packet, original);
    }

    #[test]
    fn arbitrary_bytes_never_panic(
        mut bytes in proptest::collection::vec(any::<u8>(), 0..120),
        offset in 0usize..130,
        path in any::<u32>(),
        pn in any::<u64>(),
    ) {
        let key = a5_packet_key(array::<12>(&hex(A5_IV)));
        let hp = a5_header_key();
        let initial = Keys::initial(&hex(DCID), Side::Server).unwrap();
        let _ = hp.remove(&mut bytes.clone(), offset);
        let _ = initial.remote.header.remove(&mut bytes.clone(), offset);
        let _ = key.open(PathId(path), pn, &mut bytes.clone(), offset);
        let _ = initial.remote.packet.open(PathId(path), pn, &mut bytes.clone(), offset);
        let _ = key.seal(PathId(path), pn, &mut bytes, offset);
        let _ = verify_retry_integrity(&bytes[..bytes.len().min(20)], &bytes);
    }
}
