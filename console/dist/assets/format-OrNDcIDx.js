const o=(e,t=2)=>String(e).padStart(t,"0");function m(e){if(e==null||e===0)return"";const t=new Date(e);return`${t.getFullYear()}-${o(t.getMonth()+1)}-${o(t.getDate())} ${o(t.getHours())}:${o(t.getMinutes())}:${o(t.getSeconds())}`}function c(e,t){let a;try{a=new Intl.DateTimeFormat("en-CA",{timeZone:t||"UTC",year:"numeric",month:"2-digit",day:"2-digit",hour:"2-digit",minute:"2-digit",second:"2-digit",hourCycle:"h23",timeZoneName:"short"})}catch{return c(e,"UTC")}const r=Object.fromEntries(a.formatToParts(new Date(e)).map(n=>[n.type,n.value]));return`${r.year}-${r.month}-${r.day} ${r.hour}:${r.minute}:${r.second} ${r.timeZoneName||""}`.trim()}function l(e){const t=new Date(e);return`${o(t.getFullYear(),4)}-${o(t.getMonth()+1)}-${o(t.getDate())}`}function p(e,t,a){const r=i=>{const[u,d,h]=i.split("-").map(Number);return new Date(u,d-1,h)},n=r(t);n.setDate(n.getDate()-(a-1)),l(n.getTime())<e&&n.setTime(r(e).getTime());const s=[];for(let i=l(n.getTime());i<=t&&s.length<a;i=l(n.getTime()))s.push(i),n.setDate(n.getDate()+1);return s}function g(e){return e.handleCode===200?"ok":e.triggerCode!==0&&e.triggerCode!==200||e.handleCode!==0&&e.handleCode!==200?"failed":"running"}function f(e,t=Date.now()){return g(e)!=="running"?!1:!(e.triggerCode===0&&e.scheduleTime>t)}const $={GLUE_SHELL:`#!/bin/bash
echo "xxl-job: hello shell"

echo "params: $1"
exit 0
`,GLUE_PYTHON:`#!/usr/bin/env python3
import sys
print("xxl-job: hello python")
print("params:", sys.argv[1:])
`,GLUE_PYTHON2:`# -*- coding: utf-8 -*-
import sys
print("xxl-job: hello python2")
print("params: " + " ".join(sys.argv[1:]))
`,GLUE_NODEJS:`#!/usr/bin/env node
console.log("xxl-job: hello nodejs");
console.log("params:", process.argv.slice(2));
`,GLUE_PHP:`<?php
echo "xxl-job: hello php\\n";
echo "params: " . ($argv[1] ?? "") . "\\n";
`,GLUE_POWERSHELL:`Write-Host "xxl-job: hello powershell"
Write-Host "params: $args"
exit 0
`};export{$ as G,c as a,m as b,p as d,l as f,f as k};
