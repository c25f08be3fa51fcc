import Foundation
import Hummingbird
import HummingbirdWebSocket
import Synchronization

// A comparison for Tonight's live sockets (bench/run chat): bench/relay_server.py's relay, served
// the way Tonight served /v1/live until it had its own SwiftNIO handlers (HTTP/1.1 upgraded
// through a router route by Hummingbird's WebSocket channel, one handler per socket), with nothing
// stored and no sign-in. What a socket costs here (memory, CPU per message) is what Hummingbird's
// WebSocket costs by itself. A client connects to /?user=ID and sends {"to": ID, "text": …}; the
// relay writes it to every socket of that user.
//
//   LiveFloor PORT

/// The open sockets' writers, by user.
final class Sockets: Sendable {
    private let byUser = Mutex<[String: [UUID: WebSocketOutboundWriter]]>([:])

    func add(_ writer: WebSocketOutboundWriter, id: UUID, user: String) {
        byUser.withLock { $0[user, default: [:]][id] = writer }
    }

    func remove(id: UUID, user: String) {
        byUser.withLock { sockets in
            sockets[user]?[id] = nil
            if sockets[user]?.isEmpty == true { sockets[user] = nil }
        }
    }

    func writers(of user: String) -> [WebSocketOutboundWriter] {
        byUser.withLock { Array(($0[user] ?? [:]).values) }
    }
}

let port = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 8090
let sockets = Sockets()
let router = Router(context: BasicWebSocketRequestContext.self)
router.ws("/") { _, _ in
    .upgrade([:])
} onUpgrade: { inbound, outbound, context in
    let user = context.request.uri.queryParameters["user"].map(String.init) ?? ""
    let id = UUID()
    sockets.add(outbound, id: id, user: user)
    defer { sockets.remove(id: id, user: user) }
    for try await message in inbound.messages(maxSize: 1 << 20) {
        guard case .text(let text) = message,
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
            let to = object["to"]
        else { continue }
        for writer in sockets.writers(of: "\(to)") { try? await writer.write(.text(text)) }
    }
}
let app = Application(
    router: Router(),
    server: .http1WebSocketUpgrade(webSocketRouter: router),
    configuration: .init(address: .hostname("127.0.0.1", port: port)))
try await app.runService()
