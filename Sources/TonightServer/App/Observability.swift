import Metrics
import Prometheus

/// Process-wide metrics: swift-metrics bootstrapped once with a Prometheus registry, which
/// `GET /metrics` renders. Bootstrapping is global, so every application in the process
/// (tests build many) shares the one registry.
public enum Observability {
    /// The registry `/metrics` emits.
    public static let registry: PrometheusCollectorRegistry = {
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
        return registry
    }()
}
