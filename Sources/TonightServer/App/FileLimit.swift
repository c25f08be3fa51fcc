import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's open-file limit. Every connection, database connection and media file is a
/// descriptor; distributions start processes with a soft limit of 1,024 although the hard limit
/// is far higher, so the server raises the soft limit to the hard one when it starts.
enum FileLimit {
    /// Raises the soft open-file limit to the hard limit and logs both; returns the new soft limit.
    @discardableResult
    static func raise(logger: Logger) -> Int {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        let soft = Int(clamping: limit.rlim_cur)
        logger.debug("open file limit", metadata: ["soft": "\(soft)", "hard": "\(limit.rlim_max)"])
        return soft
    }
}
