/** A policy module for `hookbus worker` in the benchmark's role-per-process line. */
import { benchPolicy } from "../bench-policy.js";

export default benchPolicy("p1");
