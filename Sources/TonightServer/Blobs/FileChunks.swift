import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file's bytes as 256 KiB ByteBuffers, read on NIO's blocking pool.
struct FileChunks: AsyncSequence, Sendable {
    typealias Element = ByteBuffer
    let path: String
    var chunkSize = 256 * 1024

    final class Iterator: AsyncIteratorProtocol {
        let path: String
        let chunkSize: Int
        var fd: Int32 = -1
        var finished = false

        init(path: String, chunkSize: Int) {
            self.path = path
            self.chunkSize = chunkSize
        }

        deinit { if fd >= 0 { close(fd) } }

        func next() async throws -> ByteBuffer? {
            if finished { return nil }
            if fd < 0 {
                let path = self.path
                fd = try await blocking { () throws -> Int32 in
                    let fd = open(path, O_RDONLY | O_CLOEXEC)
                    guard fd >= 0 else { throw posixError("open \(path)") }
                    return fd
                }
            }
            let fd = self.fd
            let size = chunkSize
            let chunk = try await blocking { () throws -> [UInt8] in
                var buffer = [UInt8](repeating: 0, count: size)
                let n = try readFully(fd, &buffer)
                buffer.removeLast(size - n)
                return buffer
            }
            if chunk.isEmpty {
                finished = true
                close(fd)
                self.fd = -1
                return nil
            }
            return ByteBuffer(bytes: chunk)
        }
    }

    func makeAsyncIterator() -> Iterator { Iterator(path: path, chunkSize: chunkSize) }
}
