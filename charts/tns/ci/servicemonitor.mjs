// Validate one ServiceMonitor (JSON on stdin) against prometheus-operator's own schema, as
// compiled by @kubernetes-models/prometheus-operator (found under TNS_SM_NODE_MODULES).
// That schema checks types, patterns and required fields, not unknown ones.
import { readFileSync } from "node:fs";

const modules = process.env.TNS_SM_NODE_MODULES;
const { ServiceMonitor } = await import(
  `${modules}/@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/ServiceMonitor.js`
);
const obj = JSON.parse(readFileSync(0, "utf8"));
try {
  new ServiceMonitor(obj).validate();
} catch (e) {
  console.log(e.message);
  process.exit(1);
}
