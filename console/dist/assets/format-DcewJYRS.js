const o=(e,n=2)=>String(e).padStart(n,"0");function s(e){if(e==null||e===0)return"";const n=new Date(e);return`${n.getFullYear()}-${o(n.getMonth()+1)}-${o(n.getDate())} ${o(n.getHours())}:${o(n.getMinutes())}:${o(n.getSeconds())}`}function i(e,n){let r;try{r=new Intl.DateTimeFormat("en-CA",{timeZone:n||"UTC",year:"numeric",month:"2-digit",day:"2-digit",hour:"2-digit",minute:"2-digit",second:"2-digit",hourCycle:"h23",timeZoneName:"short"})}catch{return i(e,"UTC")}const t=Object.fromEntries(r.formatToParts(new Date(e)).map(a=>[a.type,a.value]));return`${t.year}-${t.month}-${t.day} ${t.hour}:${t.minute}:${t.second} ${t.timeZoneName||""}`.trim()}function l(e){const n=new Date(e);return`${o(n.getMonth()+1)}-${o(n.getDate())}`}function h(e){return e.handleCode===200?"ok":e.triggerCode!==0&&e.triggerCode!==200||e.handleCode!==0&&e.handleCode!==200?"failed":"running"}const u={GLUE_SHELL:`#!/bin/bash
echo "xxl-job: hello shell"

echo "params: $1"
exit 0
`,GLUE_PYTHON:`#!/usr/bin/env python3
import sys
print("xxl-job: hello python")
print("params:", sys.argv[1:])
`,GLUE_NODEJS:`#!/usr/bin/env node
console.log("xxl-job: hello nodejs");
console.log("params:", process.argv.slice(2));
`,GLUE_PHP:`<?php
echo "xxl-job: hello php\\n";
echo "params: " . ($argv[1] ?? "") . "\\n";
`,GLUE_POWERSHELL:`Write-Host "xxl-job: hello powershell"
Write-Host "params: $args"
exit 0
`};export{u as G,i as a,s as b,l as f,h as r};
