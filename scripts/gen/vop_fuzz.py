#!/usr/bin/env python3
"""Structured differential fuzz of the VOP1 / VOP2 / VOPC decoder against LLVM 22.

    cargo build -p rocjitsu-isa --example dis
    python3 scripts/gen/vop_fuzz.py gfx942 [N]

For every opcode of the three encodings it builds N words per source kind
(SDWA, DPP, literal, random src0) whose second dwords are drawn from the valid
field ranges (selects 0..6, sparse modifier bits), so that the per-opcode
SDWA/DPP rules are exercised far more often than by uniformly random words
(scripts/dev/diff.py). Prints the agreement rate and one example of each
distinct disagreement (`HEX | ours | llvm`).
"""
import os, sys, random, subprocess
sys.path.insert(0, os.path.dirname(__file__))
from vop_oracle import decode_many
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
exe = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "examples", "dis")
cpu=sys.argv[1]; N=int(sys.argv[2]) if len(sys.argv)>2 else 8
rng=random.Random(11)
def rb(p): return 1 if rng.random()<p else 0
datas=[]
for kind in ("vop2","vop1","vopc"):
    nops = 62 if kind=="vop2" else 256
    for op in range(nops):
        for i in range(N):
            vd=rng.choice([0,1,2,3,4,5,106,126,255,rng.getrandbits(8)]); v1=rng.choice([0,1,2,3,6,7,255,rng.getrandbits(8)])
            for s0 in (0xf9,0xfa,255,rng.getrandbits(9)):
                if kind=="vop2": w=(op<<25)|(vd<<17)|(v1<<9)|s0
                elif kind=="vop1": w=(0x3f<<25)|(vd<<17)|(op<<9)|s0
                else: w=(0x3e<<25)|(op<<17)|(v1<<9)|s0
                if s0==0xf9:
                    d=rng.choice([0,1,2,3,106,124,125,126,128,200,240,248,250,253,254,255,rng.getrandbits(8)])
                    d|=rng.randrange(7)<<8|rb(.3)<<11|rb(.2)<<12|rb(.25)<<13|rb(.2)<<14|rb(.2)<<15|rng.randrange(7)<<16
                    d|=rb(.2)<<19|rb(.2)<<20|rb(.2)<<21|rb(.1)<<22|rb(.3)<<23
                    if kind!="vop1" or rb(.2):
                        d|=rng.randrange(7)<<24|rb(.2)<<27|rb(.2)<<28|rb(.2)<<29|rb(.1)<<30|rb(.3)<<31
                elif s0==0xfa:
                    d=rng.getrandbits(8)|rng.choice([rng.randrange(0x100),rng.randrange(0x100,0x170),rng.getrandbits(9)])<<8
                    d|=rb(.1)<<17|rb(.1)<<18|rb(.3)<<19|rb(.2)<<20|rb(.2)<<21
                    if kind!="vop1" or rb(.2): d|=rb(.2)<<22|rb(.2)<<23
                    d|=rng.getrandbits(8)<<24
                else:
                    d=rng.choice([0,1,64,0x3f800000,0x3ff00000,0x3c00,0x3118,rng.getrandbits(32)])
                datas.append(w.to_bytes(4,'little')+d.to_bytes(4,'little'))
ref=decode_many(cpu,datas)
out=subprocess.run([exe,cpu],input="\n".join(d.hex() for d in datas)+"\n",capture_output=True,text=True).stdout.splitlines()
agree=crash=rt=0; bad=[]
for d,r,o in zip(datas,ref,out):
    p=o.split("\t")
    if len(p)>2: rt+=1
    if r[0]=="<crash>": crash+=1; continue
    rt_=r[0] if r[0] else "<invalid>"; rs=r[1] if r[0] else 4
    if " ".join(p[0].split())==" ".join(rt_.split()) and (int(p[1])==rs or rt_=="<invalid>"): agree+=1
    else: bad.append((d.hex(),p[0],rt_))
n=len(datas)-crash
print(f"{cpu}: {agree}/{n} agree ({100*agree/max(n,1):.3f}%), {crash} crash, {rt} rt failures")
seen=set()
for h,o,r in bad:
    k=(o.split()[0], r.split()[0])
    if k in seen: continue
    seen.add(k); print(" ",h,"|",o,"|",r)
    if len(seen)>25: break
