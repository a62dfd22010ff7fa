import { createRequire as __bannerRequire } from 'node:module'; const require = __bannerRequire(import.meta.url);
import{Client,Connection,DatabaseError,Pool,Query,Result,TypeOverrides,defaults,escapeIdentifier,escapeLiteral,esm_default,types}from"./chunk-VRE7V2HE.js";import"./chunk-ABRZKSE6.js";export{Client,Connection,DatabaseError,Pool,Query,Result,TypeOverrides,esm_default as default,defaults,escapeIdentifier,escapeLiteral,types};
//# sourceMappingURL=esm-C4TSYOWW.js.map
