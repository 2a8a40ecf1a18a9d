// SPDX-License-Identifier: MIT
// pUSD's collateral plumbing for the local chain: the onramp that wraps USDC.e into pUSD, the
// offramp that unwraps it, and the two collateral adapters through which winners redeem CTF
// positions and get pUSD (not USDC.e). The offramp is the vault: the onramp sends it the USDC.e
// it takes and mints pUSD 1:1; the offramp burns pUSD and pays the USDC.e back (both must be
// pUSD minters). Polymarket's contracts also split/merge and pause; these do not.
pragma solidity ^0.8.24;

import {DevToken} from "./DevToken.sol";
import {ConditionalTokens} from "./ConditionalTokens.sol";
import {NegRiskAdapter} from "./NegRiskAdapter.sol";

contract CollateralOfframp {
    DevToken public immutable pusd;
    DevToken public immutable usdce;

    event Unwrapped(address indexed caller, address indexed asset, address indexed to, uint256 amount);

    constructor(address pusd_, address usdce_) {
        pusd = DevToken(pusd_);
        usdce = DevToken(usdce_);
    }

    /// Take `amount` pUSD (the caller approved this offramp), burn it, pay as much `asset` (USDC.e) to `to`.
    function unwrap(address asset, address to, uint256 amount) external {
        require(asset == address(usdce), "CollateralOfframp: unsupported asset");
        require(pusd.transferFrom(msg.sender, address(this), amount), "CollateralOfframp: transfer failed");
        pusd.burn(address(this), amount);
        require(usdce.transfer(to, amount), "CollateralOfframp: payout failed");
        emit Unwrapped(msg.sender, asset, to, amount);
    }
}

contract CollateralOnramp {
    DevToken public immutable pusd;
    DevToken public immutable usdce;
    /// Where the USDC.e backing pUSD goes: the offramp, which pays it back out.
    address public immutable vault;

    event Wrapped(address indexed caller, address indexed asset, address indexed to, uint256 amount);

    constructor(address pusd_, address usdce_, address vault_) {
        pusd = DevToken(pusd_);
        usdce = DevToken(usdce_);
        vault = vault_;
    }

    /// Take `amount` of `asset` (USDC.e only; the caller approved this onramp) and mint as much pUSD to `to`.
    function wrap(address asset, address to, uint256 amount) external {
        require(asset == address(usdce), "CollateralOnramp: unsupported asset");
        require(usdce.transferFrom(msg.sender, vault, amount), "CollateralOnramp: transfer failed");
        pusd.mint(to, amount);
        emit Wrapped(msg.sender, asset, to, amount);
    }
}

/// What both adapters share: pUSD in the signature, payouts wrapped to pUSD, ERC-1155 receipt.
abstract contract CollateralAdapterBase {
    ConditionalTokens public immutable ctf;
    DevToken public immutable pusd;
    DevToken public immutable usdce;
    CollateralOnramp public immutable onramp;

    event PositionsRedeemed(address indexed redeemer, bytes32 indexed conditionId, uint256 payout);

    constructor(address ctf_, address pusd_, address usdce_, address onramp_) {
        ctf = ConditionalTokens(ctf_);
        pusd = DevToken(pusd_);
        usdce = DevToken(usdce_);
        onramp = CollateralOnramp(onramp_);
        DevToken(usdce_).approve(onramp_, type(uint256).max);
    }

    /// CTF-style redeem (py-sdk sends collateral = pUSD); the caller approved this adapter on the CTF.
    function redeemPositions(address collateral, bytes32 parentCollectionId, bytes32 conditionId, uint256[] calldata indexSets)
        external
    {
        require(collateral == address(pusd), "CollateralAdapter: collateral must be pUSD");
        require(parentCollectionId == bytes32(0), "CollateralAdapter: nested positions unsupported");
        uint256 before = usdce.balanceOf(address(this));
        _redeem(msg.sender, conditionId, indexSets);
        uint256 payout = usdce.balanceOf(address(this)) - before;
        if (payout > 0) onramp.wrap(address(usdce), msg.sender, payout);
        emit PositionsRedeemed(msg.sender, conditionId, payout);
    }

    /// Take `holder`'s positions of the condition and turn them into USDC.e held here.
    function _redeem(address holder, bytes32 conditionId, uint256[] calldata indexSets) internal virtual;

    function _pull(address holder, address positionCollateral, bytes32 conditionId, uint256[] calldata indexSets)
        internal
        returns (uint256[] memory amounts)
    {
        uint256[] memory ids = new uint256[](indexSets.length);
        amounts = new uint256[](indexSets.length);
        for (uint256 i = 0; i < indexSets.length; i++) {
            ids[i] = ctf.getPositionId(positionCollateral, ctf.getCollectionId(bytes32(0), conditionId, indexSets[i]));
            amounts[i] = ctf.balanceOf(holder, ids[i]);
        }
        ctf.safeBatchTransferFrom(holder, address(this), ids, amounts, "");
    }

    function onERC1155Received(address, address, uint256, uint256, bytes calldata) external view returns (bytes4) {
        require(msg.sender == address(ctf), "CollateralAdapter: only CTF tokens");
        return this.onERC1155Received.selector;
    }

    function onERC1155BatchReceived(address, address, uint256[] calldata, uint256[] calldata, bytes calldata)
        external
        view
        returns (bytes4)
    {
        require(msg.sender == address(ctf), "CollateralAdapter: only CTF tokens");
        return this.onERC1155BatchReceived.selector;
    }
}

/// Binary CTF markets (positions collateralised by USDC.e): redeem on the CTF, pay pUSD.
contract CtfCollateralAdapter is CollateralAdapterBase {
    constructor(address ctf_, address pusd_, address usdce_, address onramp_)
        CollateralAdapterBase(ctf_, pusd_, usdce_, onramp_)
    {}

    function _redeem(address holder, bytes32 conditionId, uint256[] calldata indexSets) internal override {
        _pull(holder, address(usdce), conditionId, indexSets);
        ctf.redeemPositions(address(usdce), bytes32(0), conditionId, indexSets);
    }
}

/// Neg-risk markets (positions collateralised by the adapter's wrapped USDC.e): redeem through
/// the neg-risk adapter, pay pUSD. indexSets must be [1, 2] (yes, no).
contract NegRiskCtfCollateralAdapter is CollateralAdapterBase {
    NegRiskAdapter public immutable negRiskAdapter;

    constructor(address ctf_, address negRiskAdapter_, address pusd_, address usdce_, address onramp_)
        CollateralAdapterBase(ctf_, pusd_, usdce_, onramp_)
    {
        negRiskAdapter = NegRiskAdapter(negRiskAdapter_);
        ConditionalTokens(ctf_).setApprovalForAll(negRiskAdapter_, true);
    }

    function _redeem(address holder, bytes32 conditionId, uint256[] calldata indexSets) internal override {
        require(
            indexSets.length == 2 && indexSets[0] == 1 && indexSets[1] == 2,
            "CollateralAdapter: indexSets must be [1, 2]"
        );
        uint256[] memory amounts = _pull(holder, address(negRiskAdapter.wcol()), conditionId, indexSets);
        negRiskAdapter.redeemPositions(conditionId, amounts);
    }
}
