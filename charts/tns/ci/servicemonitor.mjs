// Validate one Prometheus Operator object (JSON on stdin: a ServiceMonitor or a PrometheusRule)
// against prometheus-operator's own schema, as compiled by @kubernetes-models/prometheus-operator
// (found under TNS_SM_NODE_MODULES). That schema checks types, patterns and required fields, not
// unknown ones.
import { readFileSync } from "node:fs";

const modules = process.env.TNS_SM_NODE_MODULES;
const obj = JSON.parse(readFileSync(0, "utf8"));
const kinds = ["ServiceMonitor", "PrometheusRule"];
if (obj.apiVersion !== "monitoring.coreos.com/v1" || !kinds.includes(obj.kind)) {
  console.log(`not a monitoring.coreos.com/v1 ${kinds.join(" or ")}: ${obj.apiVersion} ${obj.kind}`);
  process.exit(1);
}
const model = await import(
  `${modules}/@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${obj.kind}.js`
);
try {
  new model[obj.kind](obj).validate();
} catch (e) {
  console.log(e.message);
  process.exit(1);
}
