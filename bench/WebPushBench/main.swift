import Crypto
import Foundation
import TonightServer

// Web Push's own cost per message, without the network: RFC 8291 encryption of a notification
// and the RFC 8292 VAPID signature, as PushService does for every push. Prints one JSON line:
// microseconds per message for each and for both (the median of five rounds of `count`).
let count = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 2000
let browser = P256.KeyAgreement.PrivateKey()
let p256dh = browser.publicKey.x963Representation
let auth = Data((0..<16).map { _ in UInt8.random(in: .min ... .max) })
let payload = Data(
    ##"{"title":"Tonight","body":"Ana wants to be friends","url":"#/friends","kind":"friendRequest"}"##.utf8)
let vapid = VAPID(key: P256.Signing.PrivateKey(), subject: "mailto:bench@example.com")
let endpoint = URL(string: "https://push.example.com/send/abc")!

func microseconds(_ body: () throws -> Void) rethrows -> Double {
    var rounds: [Double] = []
    for _ in 0..<5 {
        let start = ContinuousClock.now
        for _ in 0..<count { try body() }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        rounds.append(seconds * 1e6 / Double(count))
    }
    return rounds.sorted()[2]
}

var sink = 0
let encrypt = try microseconds { sink &+= try WebPushCrypto.encrypt(payload, p256dh: p256dh, auth: auth).count }
let sign = try microseconds { sink &+= try vapid.signedAuthorization(for: endpoint).utf8.count }
let cached = try microseconds { sink &+= try vapid.authorization(for: endpoint).utf8.count }
let both = try microseconds {
    sink &+= try WebPushCrypto.encrypt(payload, p256dh: p256dh, auth: auth).count
    sink &+= try vapid.authorization(for: endpoint).utf8.count
}
print(
    #"{"count": \#(count), "encrypt_us": \#(encrypt), "sign_us": \#(sign), "cached_sign_us": \#(cached), "#
        + #""both_us": \#(both), "#
        + #""sink": \#(sink % 2)}"#)
