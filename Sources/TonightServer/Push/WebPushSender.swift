import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// What a push service made of one message.
enum WebPushOutcome: Sendable, Equatable {
    /// Taken (201).
    case delivered
    /// The subscription is gone (404, 410): forget it.
    case gone
    /// Try again later (429, 5xx, no connection), after `Retry-After` when the service said.
    case retry(after: Int?)
    /// The endpoint will never take a message (not a public https push service, keys that are
    /// not keys): forget it. `reason` for the log.
    case refused(String)
    /// This message was not taken (another 4xx: too large, unauthorised): keep the subscription.
    case skipped(String)
}

/// Sends Web Push messages (RFC 8030): encrypted (``WebPushCrypto``), signed for the push service
/// (``VAPID``), with `TTL`, `Urgency` and `Topic`.
///
/// The endpoint is written by a client, so it is an SSRF vector: only `https://` on port 443 to a
/// plain host name whose every address is public (``PublicAddress``), connecting to the address
/// checked; hosts in `insecureHosts` (`WEB_PUSH_INSECURE_HOSTS`: a test's stand-in) may be on any
/// address and port, and plain `http://`. No redirects; 5 s to connect, 10 s to answer.
struct WebPushSender: Sendable {
    let vapid: VAPID
    let insecureHosts: Set<String>

    /// Whether `endpoint` is one this server would post to, before any DNS lookup.
    func acceptable(_ endpoint: String) -> Bool {
        target(endpoint) != nil
    }

    /// The endpoint's URL, host (as the HTTP client reads it: the DNS override must name it
    /// exactly) and port, if it is one we post to.
    private func target(_ endpoint: String) -> (url: URL, host: String, port: Int)? {
        guard endpoint.utf8.count <= 2048, let url = URL(string: endpoint), let scheme = url.scheme?.lowercased(),
            let host = url.host, PublicAddress.isPlainHost(host), url.user == nil
        else { return nil }
        let insecure = insecureHosts.contains(host.lowercased())
        guard scheme == "https" || (insecure && scheme == "http") else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        guard insecure || port == 443 else { return nil }
        return (url, host, port)
    }

    /// Posts `payload` to `subscription` for `ttl` seconds.
    func send(
        _ payload: Data, to subscription: WebPushSubscriptionRecord, ttl: Int, urgency: String, topic: String?
    ) async -> WebPushOutcome {
        guard let (url, host, port) = target(subscription.endpoint) else {
            return .refused("not an https endpoint of a push service")
        }
        let body: Data
        let authorization: String
        do {
            guard let p256dh = Base64URL.decode(subscription.p256dh), let auth = Base64URL.decode(subscription.auth)
            else { throw WebPushCrypto.BadKeys() }
            body = try WebPushCrypto.encrypt(payload, p256dh: p256dh, auth: auth)
            authorization = try vapid.authorization(for: url)
        } catch {
            return .refused(String(describing: error))
        }
        let address: SocketAddress
        do {
            address = try await PublicAddress.resolve(host.lowercased(), port: port, allowing: insecureHosts)
        } catch let refusal as PublicAddress.Refusal where !refusal.unresolved {
            return .refused(refusal.description)
        } catch {
            return .retry(after: nil)
        }
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(10)))
        configuration.dnsOverride = [host: address.ipAddress ?? host]
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        defer { Task { try? await client.shutdown() } }
        var request = HTTPClientRequest(url: subscription.endpoint)
        request.method = .POST
        request.headers.add(name: "TTL", value: String(max(0, ttl)))
        request.headers.add(name: "Urgency", value: urgency)
        if let topic { request.headers.add(name: "Topic", value: topic) }
        request.headers.add(name: "Content-Encoding", value: "aes128gcm")
        request.headers.add(name: "Content-Type", value: "application/octet-stream")
        request.headers.add(name: "Authorization", value: authorization)
        request.body = .bytes(ByteBuffer(data: body))
        do {
            let response = try await client.execute(request, timeout: .seconds(15))
            _ = try? await response.body.collect(upTo: 64 * 1024)
            switch response.status.code {
            case 200..<300: return .delivered
            case 404, 410: return .gone
            case 429, 500..<600:
                return .retry(after: response.headers.first(name: "Retry-After").flatMap { Int($0) })
            default: return .skipped("answered \(response.status.code)")
            }
        } catch {
            return .retry(after: nil)
        }
    }
}
